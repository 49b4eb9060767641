-- CreateTable
CREATE TABLE "DefaultStream" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,

    CONSTRAINT "DefaultStream_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "DefaultStream_realmId_channelId_key" ON "DefaultStream"("realmId", "channelId");

-- CreateTable
CREATE TABLE "ChannelEmailAddress" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "creatorId" INTEGER NOT NULL,
    "senderId" INTEGER NOT NULL,
    "emailToken" TEXT NOT NULL,
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChannelEmailAddress_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ChannelEmailAddress_emailToken_key" ON "ChannelEmailAddress"("emailToken");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelEmailAddress_channelId_creatorId_senderId_key" ON "ChannelEmailAddress"("channelId", "creatorId", "senderId");

-- CreateTable
CREATE TABLE "DefaultChannel" (
    "channelId" INTEGER NOT NULL,
    "realmId" INTEGER NOT NULL,

    CONSTRAINT "DefaultChannel_pkey" PRIMARY KEY ("channelId")
);

-- CreateTable
CREATE TABLE "DefaultChannelGroup" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "DefaultChannelGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DefaultChannelGroupChannel" (
    "groupId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,

    CONSTRAINT "DefaultChannelGroupChannel_pkey" PRIMARY KEY ("groupId","channelId")
);

-- CreateIndex
CREATE INDEX "DefaultChannel_realmId_idx" ON "DefaultChannel"("realmId");

-- CreateIndex
CREATE UNIQUE INDEX "DefaultChannelGroup_realmId_name_key" ON "DefaultChannelGroup"("realmId", "name");

-- CreateIndex
CREATE INDEX "DefaultChannelGroupChannel_channelId_idx" ON "DefaultChannelGroupChannel"("channelId");

-- AddForeignKey
ALTER TABLE "DefaultChannel" ADD CONSTRAINT "DefaultChannel_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DefaultChannel" ADD CONSTRAINT "DefaultChannel_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DefaultChannelGroup" ADD CONSTRAINT "DefaultChannelGroup_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DefaultChannelGroupChannel" ADD CONSTRAINT "DefaultChannelGroupChannel_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "DefaultChannelGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DefaultChannelGroupChannel" ADD CONSTRAINT "DefaultChannelGroupChannel_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "botConfig" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "defaultEventsRegisterChannelId" INTEGER,
ADD COLUMN     "defaultSendingChannelId" INTEGER;

-- CreateTable
CREATE TABLE "BotService" (
    "id" SERIAL NOT NULL,
    "botId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "baseUrl" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "interface" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "BotService_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutgoingWebhookCall" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "botId" INTEGER NOT NULL,
    "messageId" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OutgoingWebhookCall_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "BotService_botId_key" ON "BotService"("botId");

-- CreateIndex
CREATE INDEX "OutgoingWebhookCall_nextAttemptAt_idx" ON "OutgoingWebhookCall"("nextAttemptAt");

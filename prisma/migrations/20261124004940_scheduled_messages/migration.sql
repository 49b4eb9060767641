-- CreateTable
CREATE TABLE "ScheduledMessage" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "senderId" INTEGER NOT NULL,
    "deliveryType" INTEGER NOT NULL,
    "channelId" INTEGER,
    "topic" TEXT NOT NULL DEFAULT '',
    "directTo" INTEGER[],
    "content" TEXT NOT NULL,
    "renderedContent" TEXT NOT NULL,
    "sendingClient" TEXT NOT NULL,
    "readBySender" BOOLEAN NOT NULL,
    "scheduledTimestamp" TIMESTAMP(3) NOT NULL,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "deliveredMessageId" INTEGER,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "failureMessage" TEXT,
    "reminderTargetMessageId" INTEGER,
    "reminderNote" TEXT,

    CONSTRAINT "ScheduledMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ScheduledMessage_scheduledTimestamp_idx" ON "ScheduledMessage"("scheduledTimestamp");

-- CreateIndex
CREATE INDEX "ScheduledMessage_senderId_deliveryType_idx" ON "ScheduledMessage"("senderId", "deliveryType");

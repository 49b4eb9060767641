-- CreateTable
CREATE TABLE "EventOutbox" (
    "id" BIGSERIAL NOT NULL,
    "node" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "turns" BIGINT[],
    "events" TEXT,
    "messageIds" INTEGER[],
    "xid" BIGINT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EventOutbox_pkey" PRIMARY KEY ("id")
);

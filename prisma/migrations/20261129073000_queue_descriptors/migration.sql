-- CreateTable
CREATE TABLE "QueueDescriptor" (
    "id" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "realmId" INTEGER NOT NULL,
    "node" TEXT NOT NULL,
    "options" JSONB NOT NULL,
    "snapshot" TEXT NOT NULL,
    "afterSeq" BIGINT NOT NULL,
    "nextEventId" INTEGER NOT NULL,
    "newestPrunedId" INTEGER NOT NULL,
    "lastActivity" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "QueueDescriptor_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "QueueDescriptor_node_idx" ON "QueueDescriptor"("node");

-- CreateTable
CREATE TABLE "MissedMessageEmail" (
    "userId" INTEGER NOT NULL,
    "messageId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MissedMessageEmail_pkey" PRIMARY KEY ("userId","messageId")
);

-- CreateTable
CREATE TABLE "DigestEmail" (
    "userId" INTEGER NOT NULL,
    "sentAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DigestEmail_pkey" PRIMARY KEY ("userId")
);

-- CreateIndex
CREATE INDEX "MissedMessageEmail_createdAt_idx" ON "MissedMessageEmail"("createdAt");

-- CreateTable
CREATE TABLE "UserStatus" (
    "userId" INTEGER NOT NULL,
    "statusText" TEXT NOT NULL DEFAULT '',
    "emojiName" TEXT NOT NULL DEFAULT '',
    "emojiCode" TEXT NOT NULL DEFAULT '',
    "reactionType" TEXT NOT NULL DEFAULT 'unicode_emoji',
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserStatus_pkey" PRIMARY KEY ("userId")
);

-- AddForeignKey
ALTER TABLE "UserStatus" ADD CONSTRAINT "UserStatus_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "BotStorage" (
    "userId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "BotStorage_pkey" PRIMARY KEY ("userId","key")
);

-- AddForeignKey
ALTER TABLE "BotStorage" ADD CONSTRAINT "BotStorage_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "MutedUser" (
    "userId" INTEGER NOT NULL,
    "mutedUserId" INTEGER NOT NULL,
    "dateMuted" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MutedUser_pkey" PRIMARY KEY ("userId","mutedUserId")
);

-- CreateTable
CREATE TABLE "AlertWord" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "word" TEXT NOT NULL,

    CONSTRAINT "AlertWord_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MutedUser_mutedUserId_idx" ON "MutedUser"("mutedUserId");

-- CreateIndex
CREATE UNIQUE INDEX "AlertWord_userId_word_key" ON "AlertWord"("userId", "word");

-- AddForeignKey
ALTER TABLE "MutedUser" ADD CONSTRAINT "MutedUser_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MutedUser" ADD CONSTRAINT "MutedUser_mutedUserId_fkey" FOREIGN KEY ("mutedUserId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AlertWord" ADD CONSTRAINT "AlertWord_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

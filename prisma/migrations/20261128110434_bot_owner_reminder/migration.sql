-- AlterTable
ALTER TABLE "User" ADD COLUMN     "lastReminder" TIMESTAMP(3);

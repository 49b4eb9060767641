-- DropForeignKey
ALTER TABLE "UserMessage" DROP CONSTRAINT "UserMessage_messageId_fkey";

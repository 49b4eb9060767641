-- AlterTable
ALTER TABLE "QueueDescriptor" ADD COLUMN     "restarts" JSONB NOT NULL DEFAULT '[]';

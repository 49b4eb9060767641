-- AlterTable
ALTER TABLE "QueueDescriptor" ADD COLUMN     "deliveredThrough" BIGINT NOT NULL DEFAULT 0;

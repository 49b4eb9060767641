-- Queues saved by earlier versions held a copy of every event each, a format not restored.
DELETE FROM "SavedEventQueue";

-- AlterTable
ALTER TABLE "SavedEventQueue" ADD COLUMN     "saveId" TEXT NOT NULL;

-- CreateTable
CREATE TABLE "SavedQueueEvent" (
    "saveId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "json" TEXT NOT NULL,

    CONSTRAINT "SavedQueueEvent_pkey" PRIMARY KEY ("saveId","position")
);

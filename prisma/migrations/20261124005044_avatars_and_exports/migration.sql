-- AlterTable
ALTER TABLE "User" ADD COLUMN     "avatarKey" TEXT;

-- CreateTable
CREATE TABLE "RealmExport" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "actingUserId" INTEGER,
    "exportType" INTEGER NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 1,
    "dateRequested" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dateStarted" TIMESTAMP(3),
    "dateSucceeded" TIMESTAMP(3),
    "dateFailed" TIMESTAMP(3),
    "dateDeleted" TIMESTAMP(3),
    "exportPath" TEXT,
    "sha256" TEXT,

    CONSTRAINT "RealmExport_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RealmExport_realmId_dateRequested_idx" ON "RealmExport"("realmId", "dateRequested");

-- AddForeignKey
ALTER TABLE "RealmExport" ADD CONSTRAINT "RealmExport_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

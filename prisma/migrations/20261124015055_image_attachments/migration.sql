-- CreateTable
CREATE TABLE "ImageAttachment" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "pathId" TEXT NOT NULL,
    "originalWidthPx" INTEGER NOT NULL,
    "originalHeightPx" INTEGER NOT NULL,
    "frames" INTEGER NOT NULL,
    "contentType" TEXT,
    "thumbnailMetadata" JSONB NOT NULL DEFAULT '[]',

    CONSTRAINT "ImageAttachment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ImageAttachment_pathId_key" ON "ImageAttachment"("pathId");

-- AddForeignKey
ALTER TABLE "ImageAttachment" ADD CONSTRAINT "ImageAttachment_pathId_fkey" FOREIGN KEY ("pathId") REFERENCES "Attachment"("pathId") ON DELETE CASCADE ON UPDATE CASCADE;

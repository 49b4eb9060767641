-- AlterTable
ALTER TABLE "User" ADD COLUMN     "isSystemBot" BOOLEAN NOT NULL DEFAULT false;

-- The system bots made before this column: ownerless bots at the addresses only the server gives out.
UPDATE "User" SET "isSystemBot" = true
WHERE "isBot" AND "botOwnerId" IS NULL AND split_part("deliveryEmail", '@', 1) IN ('notification-bot', 'welcome-bot', 'emailgateway');

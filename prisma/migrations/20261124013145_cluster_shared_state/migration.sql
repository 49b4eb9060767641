-- CreateTable
CREATE TABLE "ServerSecret" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "ServerSecret_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "PresenceSequence" (
    "realmId" INTEGER NOT NULL,
    "lastUpdateId" INTEGER NOT NULL,

    CONSTRAINT "PresenceSequence_pkey" PRIMARY KEY ("realmId")
);

-- Each organization's sequence starts where its presence rows left it.
INSERT INTO "PresenceSequence" ("realmId", "lastUpdateId")
SELECT u."realmId", max(p."lastUpdateId") FROM "Presence" p JOIN "User" u ON u.id = p."userId" GROUP BY u."realmId";

-- CreateTable
CREATE TABLE "Invitation" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "referredById" INTEGER,
    "multiuseInviteId" INTEGER,
    "invitedAs" INTEGER NOT NULL DEFAULT 400,
    "channelIds" INTEGER[],
    "groupIds" INTEGER[],
    "includeRealmDefaultSubscriptions" BOOLEAN NOT NULL DEFAULT false,
    "notifyReferrerOnJoin" BOOLEAN NOT NULL DEFAULT true,
    "welcomeMessageCustomText" TEXT,
    "key" TEXT NOT NULL,
    "invitedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3),
    "status" INTEGER NOT NULL DEFAULT 0,
    "createdUserId" INTEGER,

    CONSTRAINT "Invitation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MultiuseInvite" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "referredById" INTEGER NOT NULL,
    "invitedAs" INTEGER NOT NULL DEFAULT 400,
    "channelIds" INTEGER[],
    "groupIds" INTEGER[],
    "includeRealmDefaultSubscriptions" BOOLEAN NOT NULL DEFAULT false,
    "welcomeMessageCustomText" TEXT,
    "key" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3),
    "status" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "MultiuseInvite_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "InvitationEmail" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "sentAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "InvitationEmail_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Invitation_key_key" ON "Invitation"("key");

-- CreateIndex
CREATE INDEX "Invitation_realmId_status_idx" ON "Invitation"("realmId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "MultiuseInvite_key_key" ON "MultiuseInvite"("key");

-- CreateIndex
CREATE INDEX "MultiuseInvite_realmId_status_idx" ON "MultiuseInvite"("realmId", "status");

-- CreateIndex
CREATE INDEX "InvitationEmail_realmId_sentAt_idx" ON "InvitationEmail"("realmId", "sentAt");

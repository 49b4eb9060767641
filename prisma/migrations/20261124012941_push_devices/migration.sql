-- CreateTable
CREATE TABLE "Device" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "pushKey" BYTEA,
    "pushKeyId" BIGINT,
    "pushTokenId" BIGINT,
    "pendingPushTokenId" BIGINT,
    "pushTokenKind" TEXT,
    "pushTokenLastUpdated" TIMESTAMP(3),
    "pushRegistrationErrorCode" TEXT,
    "relayDeviceId" BIGINT,

    CONSTRAINT "Device_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PushDeviceToken" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "kind" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "iosAppId" TEXT,
    "lastUpdated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PushDeviceToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PushOutbox" (
    "id" SERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "realmId" INTEGER NOT NULL,
    "userId" INTEGER,
    "messageId" INTEGER,
    "data" JSONB NOT NULL DEFAULT '{}',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PushOutbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Device_userId_idx" ON "Device"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "PushDeviceToken_userId_kind_token_key" ON "PushDeviceToken"("userId", "kind", "token");

-- CreateIndex
CREATE INDEX "PushOutbox_nextAttemptAt_idx" ON "PushOutbox"("nextAttemptAt");

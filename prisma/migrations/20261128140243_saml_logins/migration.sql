-- CreateTable
CREATE TABLE "SamlLoginRequest" (
    "relayState" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "realmId" INTEGER NOT NULL,
    "idp" TEXT NOT NULL,
    "mobileOtp" TEXT,
    "desktopOtp" TEXT,
    "next" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SamlLoginRequest_pkey" PRIMARY KEY ("relayState")
);

-- CreateTable
CREATE TABLE "SamlUsedAssertion" (
    "issuer" TEXT NOT NULL,
    "assertionId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SamlUsedAssertion_pkey" PRIMARY KEY ("issuer","assertionId")
);

-- CreateIndex
CREATE INDEX "SamlLoginRequest_expiresAt_idx" ON "SamlLoginRequest"("expiresAt");

-- CreateIndex
CREATE INDEX "SamlUsedAssertion_expiresAt_idx" ON "SamlUsedAssertion"("expiresAt");

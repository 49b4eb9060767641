-- CreateTable
CREATE TABLE "RealmDomain" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "domain" TEXT NOT NULL,
    "allowSubdomains" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "RealmDomain_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "RealmDomain_realmId_domain_key" ON "RealmDomain"("realmId", "domain");

-- AddForeignKey
ALTER TABLE "RealmDomain" ADD CONSTRAINT "RealmDomain_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "archived_at" TIMESTAMPTZ(3),
ADD COLUMN     "experiment_cell" INTEGER,
ADD COLUMN     "experiment_id" UUID,
ADD COLUMN     "purged_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "experiments" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "base" JSONB NOT NULL,
    "grid" JSONB NOT NULL,
    "cells" JSONB NOT NULL,
    "references" JSONB,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),
    "purged_at" TIMESTAMPTZ(3),

    CONSTRAINT "experiments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "experiments_owner_id_created_at_idx" ON "experiments"("owner_id", "created_at");

-- CreateIndex
CREATE INDEX "experiments_created_at_idx" ON "experiments"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "experiments_owner_id_idempotency_key_key" ON "experiments"("owner_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "jobs_experiment_id_idx" ON "jobs"("experiment_id");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_experiment_id_fkey" FOREIGN KEY ("experiment_id") REFERENCES "experiments"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


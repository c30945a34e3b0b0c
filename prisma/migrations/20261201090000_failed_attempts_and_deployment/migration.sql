-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "failed_attempts" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "deployment" (
    "id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deployment_pkey" PRIMARY KEY ("id")
);

-- This database's identity (gen_random_uuid is built in from PostgreSQL 13).
INSERT INTO "deployment" ("id") VALUES (gen_random_uuid());

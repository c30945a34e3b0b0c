-- CreateTable
CREATE TABLE "environment_servers" (
    "id" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "openenv" JSONB,
    "manifest" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "fork" BOOLEAN NOT NULL,
    "observation_tokens" INTEGER NOT NULL,
    "registered_by_id" UUID,
    "registered_by_name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "environment_servers_pkey" PRIMARY KEY ("id")
);

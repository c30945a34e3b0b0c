-- CreateEnum
CREATE TYPE "role" AS ENUM ('admin', 'member');

-- CreateEnum
CREATE TYPE "job_status" AS ENUM ('queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "device_preference" AS ENUM ('gpu', 'cpu', 'any');

-- CreateEnum
CREATE TYPE "worker_device" AS ENUM ('gpu', 'cpu');

-- CreateEnum
CREATE TYPE "checkpoint_health" AS ENUM ('healthy', 'suspect', 'unhealthy', 'unknown');

-- CreateEnum
CREATE TYPE "severity" AS ENUM ('info', 'warning', 'critical');

-- CreateTable
CREATE TABLE "teams" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "share_jobs" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "teams_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "role" "role" NOT NULL,
    "team_id" UUID,
    "max_running_jobs" INTEGER,
    "max_queued_jobs" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "status" "job_status" NOT NULL,
    "priority" INTEGER NOT NULL,
    "labels" JSONB NOT NULL,
    "device" "device_preference" NOT NULL DEFAULT 'any',
    "progress" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "current_step" INTEGER NOT NULL DEFAULT 0,
    "total_steps" INTEGER NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "worker_id" TEXT,
    "backend" TEXT,
    "latest_metrics" JSONB,
    "control_request" TEXT,
    "dispatched_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_events" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "step_metrics" (
    "job_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "metrics" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "step_metrics_pkey" PRIMARY KEY ("job_id","step")
);

-- CreateTable
CREATE TABLE "trajectories" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "group" INTEGER NOT NULL,
    "sample" INTEGER NOT NULL,
    "env_seed" BIGINT NOT NULL,
    "return" DOUBLE PRECISION NOT NULL,
    "success" BOOLEAN NOT NULL,
    "turns" INTEGER NOT NULL,
    "actions" INTEGER NOT NULL,
    "format_errors" INTEGER NOT NULL,
    "tokens" INTEGER NOT NULL,
    "mean_entropy" DOUBLE PRECISION NOT NULL,
    "text" TEXT,

    CONSTRAINT "trajectories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkpoints" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "bytes" BYTEA,
    "storage_uri" TEXT,
    "size_bytes" INTEGER NOT NULL,
    "health" "checkpoint_health" NOT NULL DEFAULT 'unknown',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "collapse_warnings" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "signal" TEXT NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "severity" "severity" NOT NULL,
    "message" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "collapse_warnings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "evaluations" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "checkpoint_id" UUID,
    "status" TEXT NOT NULL,
    "environment" JSONB NOT NULL,
    "episodes" INTEGER NOT NULL,
    "success" DOUBLE PRECISION,
    "pass_at_k" DOUBLE PRECISION,
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "evaluations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "events" TEXT[],
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workers" (
    "id" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "backend" TEXT NOT NULL,
    "device" "worker_device" NOT NULL,
    "slots" INTEGER NOT NULL,
    "running" INTEGER NOT NULL DEFAULT 0,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "teams_name_key" ON "teams"("name");

-- CreateIndex
CREATE UNIQUE INDEX "users_name_key" ON "users"("name");

-- CreateIndex
CREATE INDEX "users_team_id_idx" ON "users"("team_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_user_id_idx" ON "api_keys"("user_id");

-- CreateIndex
CREATE INDEX "jobs_status_created_at_idx" ON "jobs"("status", "created_at");

-- CreateIndex
CREATE INDEX "jobs_owner_id_created_at_idx" ON "jobs"("owner_id", "created_at");

-- CreateIndex
CREATE INDEX "jobs_status_dispatched_at_idx" ON "jobs"("status", "dispatched_at");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_owner_id_idempotency_key_key" ON "jobs"("owner_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "job_events_job_id_id_idx" ON "job_events"("job_id", "id");

-- CreateIndex
CREATE INDEX "trajectories_job_id_step_idx" ON "trajectories"("job_id", "step");

-- CreateIndex
CREATE INDEX "trajectories_job_id_success_idx" ON "trajectories"("job_id", "success");

-- CreateIndex
CREATE UNIQUE INDEX "trajectories_job_id_step_group_sample_key" ON "trajectories"("job_id", "step", "group", "sample");

-- CreateIndex
CREATE UNIQUE INDEX "checkpoints_job_id_step_key" ON "checkpoints"("job_id", "step");

-- CreateIndex
CREATE INDEX "collapse_warnings_job_id_step_idx" ON "collapse_warnings"("job_id", "step");

-- CreateIndex
CREATE INDEX "evaluations_job_id_created_at_idx" ON "evaluations"("job_id", "created_at");

-- CreateIndex
CREATE INDEX "evaluations_checkpoint_id_idx" ON "evaluations"("checkpoint_id");

-- CreateIndex
CREATE INDEX "webhooks_user_id_idx" ON "webhooks"("user_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");

-- CreateIndex
CREATE INDEX "workers_last_heartbeat_at_idx" ON "workers"("last_heartbeat_at");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_events" ADD CONSTRAINT "job_events_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "step_metrics" ADD CONSTRAINT "step_metrics_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "collapse_warnings" ADD CONSTRAINT "collapse_warnings_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "evaluations" ADD CONSTRAINT "evaluations_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "evaluations" ADD CONSTRAINT "evaluations_checkpoint_id_fkey" FOREIGN KEY ("checkpoint_id") REFERENCES "checkpoints"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

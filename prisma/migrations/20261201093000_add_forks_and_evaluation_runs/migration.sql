-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "parent_job_id" UUID,
ADD COLUMN     "parent_step" INTEGER;

-- AlterTable
ALTER TABLE "evaluations" ADD COLUMN     "error" TEXT,
ADD COLUMN     "k" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "started_at" TIMESTAMPTZ(3),
ADD COLUMN     "step" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "temperature" DOUBLE PRECISION NOT NULL DEFAULT 0.5,
ADD COLUMN     "worker_id" TEXT;

-- CreateIndex
CREATE INDEX "jobs_parent_job_id_idx" ON "jobs"("parent_job_id");

-- CreateIndex
CREATE INDEX "evaluations_status_created_at_idx" ON "evaluations"("status", "created_at");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_parent_job_id_fkey" FOREIGN KEY ("parent_job_id") REFERENCES "jobs"("id") ON DELETE SET NULL ON UPDATE CASCADE;

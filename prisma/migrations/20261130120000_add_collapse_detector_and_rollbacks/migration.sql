-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "rollbacks" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "collapse_warnings" ADD COLUMN     "detector" TEXT NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "collapse_warnings_job_id_step_detector_key" ON "collapse_warnings"("job_id", "step", "detector");

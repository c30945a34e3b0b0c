import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

export interface RunningJobRow {
  id: string;
  name: string;
  owner: string;
  currentStep: number;
  totalSteps: number;
  latestMetrics: Record<string, number> | null;
}

export interface StepTiming {
  jobId: string;
  steps: number;
  firstAt: Date;
  lastAt: Date;
}

/** Read-only counts for Prometheus: the lab's state as the database records it, whichever process wrote it. */
@Injectable()
export class TelemetryRepository {
  constructor(private readonly prisma: PrismaService) {}

  jobsByStatus() {
    return this.prisma.job.groupBy({ by: ['status'], _count: { _all: true } });
  }

  /** Every job ever accepted (jobs are never deleted; an idempotent replay adds none). */
  jobsSubmitted(): Promise<number> {
    return this.prisma.job.count();
  }

  /** Queued jobs by the device they ask for, with the oldest submission time. */
  waitingByDevice() {
    return this.prisma.job.groupBy({ by: ['device'], where: { status: 'queued' }, _count: { _all: true }, _min: { createdAt: true } });
  }

  /** Workers heard from within `freshMs`. */
  workers(freshMs: number) {
    return this.prisma.worker.findMany({ where: { lastHeartbeatAt: { gte: new Date(Date.now() - freshMs) } }, orderBy: { id: 'asc' } });
  }

  async runningJobs(): Promise<RunningJobRow[]> {
    const rows = await this.prisma.job.findMany({
      where: { status: 'running' },
      select: { id: true, name: true, currentStep: true, totalSteps: true, latestMetrics: true, owner: { select: { name: true } } },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((r) => ({ id: r.id, name: r.name, owner: r.owner.name, currentStep: r.currentStep, totalSteps: r.totalSteps, latestMetrics: r.latestMetrics as Record<string, number> | null }));
  }

  /** Per job, the number of its last `window` stored steps and when the first and last of them were written. */
  async recentStepTimes(jobIds: string[], window: number): Promise<StepTiming[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ job_id: string; steps: bigint; first_at: Date; last_at: Date }[]>`
      SELECT job_id, COUNT(*) AS steps, MIN(created_at) AS first_at, MAX(created_at) AS last_at
      FROM (SELECT job_id, created_at, ROW_NUMBER() OVER (PARTITION BY job_id ORDER BY step DESC) AS rn
            FROM step_metrics WHERE job_id = ANY(${jobIds}::uuid[])) recent
      WHERE rn <= ${window}
      GROUP BY job_id`;
    return rows.map((r) => ({ jobId: r.job_id, steps: Number(r.steps), firstAt: r.first_at, lastAt: r.last_at }));
  }

  /**
   * Per job, the metrics of its latest step that has an evaluation (`eval/...success...`):
   * evaluation runs every few steps, so the latest step alone usually has none.
   */
  async latestEvaluations(jobIds: string[]): Promise<{ jobId: string; step: number; metrics: Record<string, number> }[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ job_id: string; step: number; metrics: Record<string, number> }[]>`
      SELECT DISTINCT ON (job_id) job_id, step, metrics
      FROM step_metrics
      WHERE job_id = ANY(${jobIds}::uuid[])
        AND EXISTS (SELECT 1 FROM jsonb_object_keys(metrics) AS name WHERE name LIKE 'eval/%success%')
      ORDER BY job_id, step DESC`;
    return rows.map((r) => ({ jobId: r.job_id, step: r.step, metrics: r.metrics }));
  }

  /** Warnings by detector and severity over all jobs. */
  warningCounts() {
    return this.prisma.collapseWarning.groupBy({ by: ['detector', 'severity'], _count: { _all: true } });
  }
}

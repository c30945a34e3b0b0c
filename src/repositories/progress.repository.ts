import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** What a running job has reported about its pace: the reads behind its warm-up progress and ETA. */
export interface ProgressReadings {
  /** When the current attempt's training process started (its first log event). */
  processStartedAt: Date | null;
  /** The newest warm-up progress line the trainer logged, and when. */
  warmupReport: { message: string; at: Date } | null;
  /** The newest RL steps (step ≥ 1, at most RECENT_STEPS), newest first, with when each was stored. */
  recentSteps: { step: number; at: Date }[];
}

/** Steps whose timing makes an ETA: enough to smooth one slow step, few enough to follow a change of pace. */
export const RECENT_STEPS = 11;

@Injectable()
export class ProgressRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Readings of each of `jobIds`, three queries whatever their number. */
  async readings(jobIds: string[]): Promise<Map<string, ProgressReadings>> {
    const result = new Map<string, ProgressReadings>(jobIds.map((id) => [id, { processStartedAt: null, warmupReport: null, recentSteps: [] }]));
    if (jobIds.length === 0) return result;
    const [starts, reports, steps] = await Promise.all([
      this.prisma.$queryRaw<{ job_id: string; created_at: Date }[]>`
        SELECT DISTINCT ON (job_id) job_id, created_at FROM job_events
        WHERE job_id = ANY(${jobIds}::uuid[]) AND type = 'log' AND message LIKE 'training process started%'
        ORDER BY job_id, id DESC`,
      this.prisma.$queryRaw<{ job_id: string; message: string; created_at: Date }[]>`
        SELECT DISTINCT ON (job_id) job_id, message, created_at FROM job_events
        WHERE job_id = ANY(${jobIds}::uuid[]) AND type = 'log' AND message LIKE 'warm-up %'
        ORDER BY job_id, id DESC`,
      this.prisma.$queryRaw<{ job_id: string; step: number; created_at: Date }[]>`
        SELECT job_id, step, created_at FROM (
          SELECT job_id, step, created_at, row_number() OVER (PARTITION BY job_id ORDER BY step DESC) AS r
          FROM step_metrics WHERE job_id = ANY(${jobIds}::uuid[]) AND step >= 1) recent
        WHERE r <= ${RECENT_STEPS} ORDER BY job_id, step DESC`,
    ]);
    for (const row of starts) result.get(row.job_id)!.processStartedAt = row.created_at;
    for (const row of reports) result.get(row.job_id)!.warmupReport = { message: row.message, at: row.created_at };
    for (const row of steps) result.get(row.job_id)!.recentSteps.push({ step: row.step, at: row.created_at });
    return result;
  }

  /**
   * Everything a job's warm-up reported, oldest first: its progress lines (log events that start
   * with `warm-up `) and the starts of its training processes, with when each was stored; and the
   * metrics of step 0 (the warm-up's own and the evaluation after it) once stored.
   */
  async warmupHistory(jobId: string): Promise<{ lines: { message: string; at: Date }[]; step0: Record<string, number> | null }> {
    const [lines, step0] = await Promise.all([
      this.prisma.jobEvent.findMany({
        where: { jobId, type: 'log', OR: [{ message: { startsWith: 'warm-up ' } }, { message: { startsWith: 'training process started' } }] },
        select: { message: true, createdAt: true },
        orderBy: { id: 'asc' },
        take: 2000,
      }),
      this.prisma.stepMetric.findUnique({ where: { jobId_step: { jobId, step: 0 } }, select: { metrics: true } }),
    ]);
    return { lines: lines.map((line) => ({ message: line.message, at: line.createdAt })), step0: (step0?.metrics as Record<string, number> | undefined) ?? null };
  }
}

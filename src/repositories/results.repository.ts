import { Injectable } from '@nestjs/common';
import type { JobStatus, Prisma } from '../generated/prisma/client';
import type { TrajectoryRecord } from '../training/records';
import type { CheckpointHealth, CollapseWarning } from '../training/signals/collapse';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import { PrismaService } from './prisma.service';

export interface TrajectoryFilter {
  fromStep?: number;
  toStep?: number;
  success?: boolean;
  minReturn?: number;
  withText?: boolean;
  afterId?: bigint;
  limit: number;
}

/** ResultsRepository.saveStep's statement: $1 job, $2 step, $3 metrics, $4 event message, $5 event data, $6 trajectories, $7 progress. */
const SAVE_STEP = {
  name: 'save-step',
  text: `
    WITH first AS (
      SELECT NOT EXISTS (SELECT 1 FROM step_metrics WHERE job_id = $1::uuid AND step = $2::int) AS is_first
    ), metric AS (
      INSERT INTO step_metrics (job_id, step, metrics) VALUES ($1::uuid, $2::int, $3::jsonb)
      ON CONFLICT (job_id, step) DO UPDATE SET metrics = EXCLUDED.metrics
    ), event AS (
      INSERT INTO job_events (job_id, type, message, data)
      SELECT $1::uuid, 'step', $4::text, $5::jsonb FROM first WHERE is_first
    ), kept AS (
      INSERT INTO trajectories (job_id, step, "group", sample, env_seed, "return", success, turns, actions, format_errors, tokens, mean_entropy, text)
      SELECT $1::uuid, $2::int, t."group", t.sample, t.env_seed, t."return", t.success, t.turns, t.actions, t.format_errors, t.tokens, t.mean_entropy, t.text
      FROM jsonb_to_recordset($6::jsonb) AS t("group" int, sample int, env_seed bigint, "return" float8, success boolean, turns int, actions int, format_errors int, tokens int, mean_entropy float8, text text)
      ON CONFLICT (job_id, step, "group", sample) DO NOTHING
    )
    UPDATE jobs SET current_step = $2::int, progress = $7::float8, latest_metrics = $3::jsonb, updated_at = now() WHERE id = $1::uuid`,
};

/** What training produces: step metrics, trajectories, checkpoints. */
@Injectable()
export class ResultsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * One step, atomically: its metrics row (upsert: a retried write is harmless), its
   * trajectories, the job's progress and a `step` event for live streams. The event is added
   * only with the step's first metrics row: a retry whose first try was committed (its answer
   * lost) adds no second one. A resumed run discards the rows after its checkpoint, so the
   * steps it trains again get their events again.
   *
   * One SQL statement (data-modifying CTEs, committed as one transaction before it answers):
   * the worker pays one round trip per step instead of a transaction of six, with the
   * trajectories as one JSON parameter, as a prepared statement (PrismaService.prepared).
   * Every part sees the rows as they were before the statement, so `first` tells whether the
   * metrics row existed.
   */
  async saveStep(jobId: string, step: number, totalSteps: number, metrics: Record<string, number>, trajectories: TrajectoryRecord[]): Promise<void> {
    const json = JSON.stringify(metrics);
    const rows = JSON.stringify(
      trajectories.map((t) => ({
        group: t.group,
        sample: t.sample,
        env_seed: t.envSeed,
        return: t.return,
        success: t.success,
        turns: t.turns,
        actions: t.actions,
        format_errors: t.formatErrors,
        tokens: t.tokens,
        mean_entropy: t.meanEntropy,
        text: t.text ?? null,
      })),
    );
    const values = [jobId, step, json, `step ${step}`, JSON.stringify({ step, metrics }), rows, step / totalSteps];
    await this.cache.dropAfter(jobId, () => this.prisma.prepared(SAVE_STEP.name, SAVE_STEP.text, values));
  }

  /**
   * Stores a checkpoint with its health tag and prunes: the newest `keep` checkpoints stay, and
   * so does the newest healthy one (what a rollback returns to). Its event comes with the
   * first write of the step's checkpoint only (a retried write adds none).
   */
  async saveCheckpoint(jobId: string, step: number, bytes: Uint8Array, keep: number, health: CheckpointHealth) {
    const data = new Uint8Array(bytes);
    return this.prisma.$transaction(async (tx) => {
      const existed = (await tx.checkpoint.count({ where: { jobId, step } })) > 0;
      const saved = await tx.checkpoint.upsert({
        where: { jobId_step: { jobId, step } },
        create: { jobId, step, bytes: data, sizeBytes: data.length, health },
        update: { bytes: data, sizeBytes: data.length, health },
        select: { id: true, step: true, sizeBytes: true },
      });
      const all = await tx.checkpoint.findMany({ where: { jobId }, orderBy: { step: 'desc' }, select: { id: true, health: true } });
      const newestHealthy = all.find((c) => c.health === 'healthy')?.id;
      const stale = all.slice(keep).filter((c) => c.id !== newestHealthy);
      if (stale.length > 0) await tx.checkpoint.deleteMany({ where: { id: { in: stale.map((c) => c.id) } } });
      if (!existed) await tx.jobEvent.create({ data: { jobId, type: 'checkpoint', message: `checkpoint at step ${step} (${health})`, data: { step, checkpointId: saved.id, sizeBytes: data.length, health } } });
      return saved;
    });
  }

  /** Warnings with their events, atomically; a retried write adds nothing (unique per step and detector). */
  saveWarnings(jobId: string, warnings: CollapseWarning[]) {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.collapseWarning.createMany({
        data: warnings.map((w) => ({ jobId, step: w.step, detector: w.detector, signal: w.signal, value: w.value, threshold: w.threshold, severity: w.severity, message: w.message })),
        skipDuplicates: true,
      });
      if (count > 0) {
        await tx.jobEvent.createMany({
          data: warnings.map((w) => ({ jobId, type: 'warning', message: w.message, data: { ...w } as Prisma.InputJsonObject })),
        });
      }
      return count;
    });
  }

  warnings(jobId: string, minSeverity?: 'info' | 'warning' | 'critical') {
    const severities = { info: ['info', 'warning', 'critical'], warning: ['warning', 'critical'], critical: ['critical'] } as const;
    return this.prisma.collapseWarning.findMany({
      where: { jobId, ...(minSeverity ? { severity: { in: [...severities[minSeverity]] } } : {}) },
      orderBy: [{ step: 'asc' }, { createdAt: 'asc' }],
    });
  }

  /** The newest checkpoint tagged healthy at or before `step` (rollback target). */
  latestHealthyCheckpoint(jobId: string, atOrBefore: number) {
    return this.prisma.checkpoint.findFirst({ where: { jobId, health: 'healthy', step: { lte: atOrBefore } }, orderBy: { step: 'desc' } });
  }

  /**
   * A rollback, in one transaction: the job, if still in one of `from`, takes `data` (back to the
   * queue, perhaps with a new spec) and the audit event, and everything it produced after `step`
   * is forgotten: metrics, trajectories, warnings and checkpoints. Null, with nothing changed,
   * when the job has meanwhile left those states.
   */
  rollBackTo(jobId: string, step: number, data: Prisma.JobUpdateManyMutationInput, event: { message: string; data: Prisma.InputJsonValue }, from: JobStatus[] = ['running']) {
    return this.cache.dropAfter(jobId, () => this.prisma.$transaction(async (tx) => {
      const { count } = await tx.job.updateMany({ where: { id: jobId, status: { in: from } }, data });
      if (count === 0) return null;
      const after = { jobId, step: { gt: step } };
      await tx.stepMetric.deleteMany({ where: after });
      await tx.trajectory.deleteMany({ where: after });
      await tx.collapseWarning.deleteMany({ where: after });
      await tx.checkpoint.deleteMany({ where: after });
      await tx.jobEvent.create({ data: { jobId, type: 'audit', message: event.message, data: event.data } });
      return tx.job.findUnique({ where: { id: jobId }, include: { owner: true } });
    }));
  }

  /** A checkpoint of the job, without its bytes. */
  checkpointOf(jobId: string, checkpointId: string) {
    return this.prisma.checkpoint.findFirst({ where: { id: checkpointId, jobId }, select: { id: true, step: true, health: true } });
  }

  latestCheckpoint(jobId: string) {
    return this.prisma.checkpoint.findFirst({ where: { jobId }, orderBy: { step: 'desc' } });
  }

  /** Forgets results after `step` (a resumed run recomputes them from the checkpoint). */
  discardAfter(jobId: string, step: number) {
    return this.prisma.$transaction([
      this.prisma.stepMetric.deleteMany({ where: { jobId, step: { gt: step } } }),
      this.prisma.trajectory.deleteMany({ where: { jobId, step: { gt: step } } }),
      this.prisma.collapseWarning.deleteMany({ where: { jobId, step: { gt: step } } }),
    ]);
  }

  metrics(jobId: string, fromStep: number | undefined, toStep: number | undefined) {
    return this.prisma.stepMetric.findMany({
      where: { jobId, step: { gte: fromStep, lte: toStep } },
      orderBy: { step: 'asc' },
      select: { step: true, metrics: true },
    });
  }

  trajectories(jobId: string, filter: TrajectoryFilter) {
    return this.prisma.trajectory.findMany({
      where: {
        jobId,
        step: { gte: filter.fromStep, lte: filter.toStep },
        success: filter.success,
        return: filter.minReturn === undefined ? undefined : { gte: filter.minReturn },
        text: filter.withText ? { not: null } : undefined,
        id: filter.afterId === undefined ? undefined : { gt: filter.afterId },
      },
      orderBy: { id: 'asc' },
      take: filter.limit,
    });
  }

  /** The newest step that has trajectories, or null. */
  async latestTrajectoryStep(jobId: string): Promise<number | null> {
    return (await this.prisma.trajectory.aggregate({ where: { jobId }, _max: { step: true } }))._max.step;
  }

  /** The step of one of the job's trajectories (a page cursor), or null. */
  async trajectoryStep(jobId: string, id: bigint): Promise<number | null> {
    return (await this.prisma.trajectory.findFirst({ where: { jobId, id }, select: { step: true } }))?.step ?? null;
  }

  checkpoints(jobId: string) {
    return this.prisma.checkpoint.findMany({
      where: { jobId },
      orderBy: { step: 'asc' },
      select: { id: true, jobId: true, step: true, sizeBytes: true, health: true, createdAt: true },
    });
  }

  checkpointWithBytes(id: string) {
    return this.prisma.checkpoint.findUnique({ where: { id }, include: { job: { select: { ownerId: true, owner: { select: { teamId: true } } } } } });
  }
}

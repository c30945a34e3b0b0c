import { Injectable } from '@nestjs/common';
import type { ControlRequest, JobStatus } from '../contracts/jobs.dto';
import type { Prisma } from '../generated/prisma/client';
import type { TrajectoryRecord } from '../training/records';
import type { CheckpointHealth, CollapseWarning } from '../training/signals/collapse';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import type { JobEventType, JobRow } from './job.repository';
import { PrismaService } from './prisma.service';

type Tx = Prisma.TransactionClient;

/** One event of the lifecycle table (src/services/job-lifecycle.ts): the states it applies to and where it leads. */
export interface StateChange {
  from: readonly JobStatus[];
  to: JobStatus;
}

/** The fencing token of one attempt: every write it makes is refused once another attempt holds the job. */
export interface AttemptToken {
  jobId: string;
  attempt: number;
  workerId: string;
}

/** A write of an attempt that no longer holds its job (another attempt took it over, or it was requeued): it must stop. */
export class AttemptLost extends Error {
  constructor(readonly token: AttemptToken) {
    super(`attempt ${token.attempt} of job ${token.jobId} on ${token.workerId} no longer holds the job`);
    this.name = 'AttemptLost';
  }
}

/** The job event a change records. */
export interface ChangeRecord {
  message: string;
  data?: Prisma.InputJsonValue;
  type?: JobEventType;
}

/** How a running attempt ends, as its settlement decided under the job's lock. */
export interface AttemptEnd {
  change: StateChange;
  data: Prisma.JobUpdateManyMutationInput;
  record: ChangeRecord;
  /** A rollback: everything the job produced after this step is forgotten with the change. */
  rollbackToStep?: number;
}

/** A new attempt, as `start` stored it. */
export interface StartedAttempt {
  row: JobRow;
  token: AttemptToken;
  /** The checkpoint it resumes from; null: it starts from scratch. */
  fromStep: number | null;
}

/** ResultsRepository.saveStep's statement, fenced: $1 job, $2 step, $3 metrics, $4 event message, $5 event data, $6 trajectories, $7 progress, $8 attempt, $9 worker. */
const SAVE_STEP = {
  name: 'save-step-fenced',
  text: `
    WITH fence AS (
      SELECT id FROM jobs WHERE id = $1::uuid AND status = 'running' AND attempt = $8::int AND worker_id = $9::text FOR UPDATE
    ), first AS (
      SELECT NOT EXISTS (SELECT 1 FROM step_metrics WHERE job_id = $1::uuid AND step = $2::int) AS is_first FROM fence
    ), metric AS (
      INSERT INTO step_metrics (job_id, step, metrics) SELECT $1::uuid, $2::int, $3::jsonb FROM fence
      ON CONFLICT (job_id, step) DO UPDATE SET metrics = EXCLUDED.metrics
    ), event AS (
      INSERT INTO job_events (job_id, type, message, data)
      SELECT $1::uuid, 'step', $4::text, $5::jsonb FROM first WHERE is_first
    ), kept AS (
      INSERT INTO trajectories (job_id, step, "group", sample, env_seed, "return", success, turns, actions, format_errors, tokens, mean_entropy, text)
      SELECT $1::uuid, $2::int, t."group", t.sample, t.env_seed, t."return", t.success, t.turns, t.actions, t.format_errors, t.tokens, t.mean_entropy, t.text
      FROM fence, jsonb_to_recordset($6::jsonb) AS t("group" int, sample int, env_seed bigint, "return" float8, success boolean, turns int, actions int, format_errors int, tokens int, mean_entropy float8, text text)
      ON CONFLICT (job_id, step, "group", sample) DO NOTHING
    )
    UPDATE jobs SET current_step = $2::int, progress = $7::float8, latest_metrics = $3::jsonb, updated_at = now() WHERE id IN (SELECT id FROM fence) RETURNING id`,
};

/**
 * The one place a job's status changes and a running attempt writes (docs/failure-behaviour.md,
 * "One lifecycle"). Every change is a compare-and-set: on the job's status (the events of the
 * lifecycle table, src/services/job-lifecycle.ts) and, for what an attempt writes (steps,
 * trajectories, warnings, checkpoints, logs, its final state), on its fencing token, the attempt
 * number and worker. An attempt that lost its job gets AttemptLost from its next write, and
 * nothing of that write is stored.
 *
 * Usage records follow the attempts: `start` opens one, and whatever moves a job out of
 * `running` closes it in the same transaction, at the moment the attempt ended, or for an
 * attempt whose worker was lost, when that worker was last heard from.
 */
@Injectable()
export class JobLifecycleRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * Moves the job by `change` if it is still in one of its `from` states (and, with `attempt`,
   * still that attempt, on that worker when given), records the event, and closes the usage of
   * attempts that have no slot any more. Null, with nothing changed, when the job has moved on.
   */
  transition(jobId: string, change: StateChange, data: Prisma.JobUpdateManyMutationInput, record: ChangeRecord, attempt?: { attempt: number; workerId?: string | null }): Promise<JobRow | null> {
    return this.write(jobId, async (tx) => {
      const where: Prisma.JobWhereInput = { id: jobId, status: { in: [...change.from] }, ...(attempt ? { attempt: attempt.attempt, ...(attempt.workerId !== undefined ? { workerId: attempt.workerId } : {}) } : {}) };
      const { count } = await tx.job.updateMany({ where, data: { ...data, status: change.to } });
      if (count === 0) return null;
      if (change.to !== 'running') await closeLostUsage(tx, jobId);
      await addEvent(tx, jobId, record, change.to);
      return readRow(tx, jobId);
    });
  }

  /** Records a control request for the running attempt, unless a request it does not outrank is pending. Null when refused or the job is not running. */
  requestControl(jobId: string, request: ControlRequest, replaces: readonly ControlRequest[], record: ChangeRecord): Promise<JobRow | null> {
    return this.write(jobId, async (tx) => {
      const { count } = await tx.job.updateMany({ where: { id: jobId, status: 'running', OR: [{ controlRequest: null }, { controlRequest: { in: [...replaces] } }] }, data: { controlRequest: request } });
      if (count === 0) return null;
      await addEvent(tx, jobId, { type: 'audit', data: { request }, ...record }, 'running');
      return readRow(tx, jobId);
    });
  }

  /**
   * A worker begins attempt `seen + 1`, in one transaction: the job becomes `running` on it (only
   * if it is still at attempt `seen`, so of two workers given the same job one wins), an earlier
   * attempt's open usage is closed when its worker was last heard from, the results after the
   * newest checkpoint are discarded (the new attempt trains them again), its own usage record is
   * opened and the event recorded. From here on, only this attempt can write.
   */
  start(jobId: string, change: StateChange, seen: number, worker: { id: string; device: 'gpu' | 'cpu' }, message: (fromStep: number | null, attempt: number) => string): Promise<StartedAttempt | null> {
    return this.write(jobId, async (tx) => {
      const attempt = seen + 1;
      // A preempt asked of the lost attempt is moot: the job left its slot anyway. A pending
      // cancel or pause the caller has already obeyed before starting (JobRunnerService).
      const count = await tx.$executeRaw`
        UPDATE jobs SET status = ${change.to}::job_status, attempt = ${attempt}, worker_id = ${worker.id}, error = NULL,
          control_request = NULLIF(control_request, 'preempt'), started_at = COALESCE(started_at, now()), updated_at = now()
        WHERE id = ${jobId}::uuid AND status = ANY(${[...change.from]}::job_status[]) AND attempt = ${seen}`;
      if (count === 0) return null;
      await closeLostUsage(tx, jobId);
      const checkpoint = await tx.checkpoint.findFirst({ where: { jobId }, orderBy: { step: 'desc' }, select: { step: true } });
      const fromStep = checkpoint?.step ?? null;
      const after = { jobId, step: { gt: fromStep ?? -1 } };
      await tx.stepMetric.deleteMany({ where: after });
      await tx.trajectory.deleteMany({ where: after });
      await tx.collapseWarning.deleteMany({ where: after });
      await tx.job.update({ where: { id: jobId }, data: { currentStep: fromStep ?? 0 } });
      const row = (await readRow(tx, jobId))!;
      await tx.usageRecord.create({ data: { jobId, userId: row.ownerId, workerId: worker.id, device: worker.device, attempt, startedAt: new Date() } });
      await addEvent(tx, jobId, { message: message(fromStep, attempt), data: { status: 'running', attempt, worker: worker.id, fromStep } }, 'running');
      return { row, token: { jobId, attempt, workerId: worker.id }, fromStep };
    });
  }

  /**
   * How a running attempt ends, under a lock on the job's row: `plan` sees the request pending
   * now (a cancel that came in after the attempt's last poll wins over its outcome), and its
   * change, the attempt's usage record closed at `endedAt` and a rollback's discard are stored
   * together. AttemptLost when the attempt no longer holds the job (or an earlier try stored it).
   */
  settle(token: AttemptToken, endedAt: Date, plan: (pending: ControlRequest | null) => AttemptEnd): Promise<JobRow> {
    return this.write(token.jobId, async (tx) => {
      const pending = await fence(tx, token);
      const end = plan(pending);
      const { count } = await tx.job.updateMany({ where: { id: token.jobId, status: { in: [...end.change.from] } }, data: { ...end.data, status: end.change.to } });
      if (count === 0) throw new AttemptLost(token);
      if (end.rollbackToStep !== undefined) await discardAfter(tx, token.jobId, end.rollbackToStep, true);
      await tx.usageRecord.updateMany({ where: { jobId: token.jobId, attempt: token.attempt, endedAt: null }, data: { endedAt } });
      await closeLostUsage(tx, token.jobId);
      await addEvent(tx, token.jobId, end.record, end.change.to);
      return (await readRow(tx, token.jobId))!;
    });
  }

  /**
   * A rollback by hand (the job has stopped): the job takes `data` if it is still in `change.from`,
   * and everything it produced after `step` (metrics, trajectories, warnings, checkpoints) is
   * forgotten, in one transaction. Null, with nothing changed, when the job has moved on.
   */
  rollBack(jobId: string, change: StateChange, step: number, data: Prisma.JobUpdateManyMutationInput, record: ChangeRecord): Promise<JobRow | null> {
    return this.write(jobId, async (tx) => {
      const { count } = await tx.job.updateMany({ where: { id: jobId, status: { in: [...change.from] } }, data: { ...data, status: change.to } });
      if (count === 0) return null;
      await discardAfter(tx, jobId, step, true);
      await closeLostUsage(tx, jobId);
      await addEvent(tx, jobId, { type: 'audit', ...record }, change.to);
      return readRow(tx, jobId);
    });
  }

  /**
   * One step of an attempt, atomically and only while it holds the job: its metrics row
   * (upserted: a retried write is harmless), its trajectories, the job's progress and a `step`
   * event, added only with the step's first metrics row (a retry whose first try was committed
   * adds none). One statement of data-modifying CTEs on a prepared statement (one round trip per
   * step); the fence locks the job's row, so a takeover waits for it or it sees the takeover.
   */
  async saveStep(token: AttemptToken, step: number, totalSteps: number, metrics: Record<string, number>, trajectories: TrajectoryRecord[]): Promise<void> {
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
    const json = JSON.stringify(metrics);
    const values = [token.jobId, step, json, `step ${step}`, JSON.stringify({ step, metrics }), rows, step / totalSteps, token.attempt, token.workerId];
    const updated = await this.cache.dropAfter(token.jobId, () => this.prisma.prepared(SAVE_STEP.name, SAVE_STEP.text, values));
    if (updated.length === 0) throw new AttemptLost(token);
  }

  /**
   * A checkpoint with its health tag, then pruning: the newest `keep` stay, and so does the
   * newest healthy one (what a rollback returns to). Its event comes with the step's first
   * checkpoint only (a retried write adds none).
   */
  saveCheckpoint(token: AttemptToken, step: number, bytes: Uint8Array, keep: number, health: CheckpointHealth) {
    const data = new Uint8Array(bytes);
    const jobId = token.jobId;
    return this.prisma.$transaction(async (tx) => {
      await fence(tx, token);
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

  /** Warnings with their events, atomically; a retried write adds nothing (unique per step and detector). Returns how many were new. */
  saveWarnings(token: AttemptToken, warnings: CollapseWarning[]): Promise<number> {
    const jobId = token.jobId;
    return this.prisma.$transaction(async (tx) => {
      await fence(tx, token);
      const { count } = await tx.collapseWarning.createMany({
        data: warnings.map((w) => ({ jobId, step: w.step, detector: w.detector, signal: w.signal, value: w.value, threshold: w.threshold, severity: w.severity, message: w.message })),
        skipDuplicates: true,
      });
      if (count > 0) await tx.jobEvent.createMany({ data: warnings.map((w) => ({ jobId, type: 'warning', message: w.message, data: { ...w } as Prisma.InputJsonObject })) });
      return count;
    });
  }

  /** A log line of the attempt (and, with `backend`, the backend its training runs on). */
  async log(token: AttemptToken, message: string, data?: Prisma.InputJsonValue, backend?: string): Promise<void> {
    await this.write(token.jobId, async (tx) => {
      await fence(tx, token);
      if (backend !== undefined) await tx.job.update({ where: { id: token.jobId }, data: { backend } });
      await tx.jobEvent.create({ data: { jobId: token.jobId, type: 'log', message, data } });
    });
  }

  private write<T>(jobId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.cache.dropAfter(jobId, () => this.prisma.$transaction(work));
  }
}

/** Locks the job's row if the attempt still holds it, and returns the request pending for it; AttemptLost otherwise. */
async function fence(tx: Tx, token: AttemptToken): Promise<ControlRequest | null> {
  const rows = await tx.$queryRaw<{ control_request: ControlRequest | null }[]>`
    SELECT control_request FROM jobs WHERE id = ${token.jobId}::uuid AND status = 'running' AND attempt = ${token.attempt} AND worker_id = ${token.workerId} FOR UPDATE`;
  if (rows.length === 0) throw new AttemptLost(token);
  return rows[0].control_request;
}

/**
 * Closes the job's usage records still open: attempts that hold no slot any more because their
 * worker was lost (killed, frozen, restarted). Each ends when its worker was last heard from
 * (its heartbeat), never after now and never before it began.
 */
async function closeLostUsage(tx: Tx, jobId: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE usage_records r
    SET ended_at = GREATEST(r.started_at, LEAST(now(), COALESCE((SELECT w.last_heartbeat_at FROM workers w WHERE w.id = r.worker_id), now())))
    WHERE r.job_id = ${jobId}::uuid AND r.ended_at IS NULL`;
}

/** Forgets what the job produced after `step`: metrics, trajectories, warnings, and with `checkpoints` its checkpoints too. */
async function discardAfter(tx: Tx, jobId: string, step: number, checkpoints: boolean): Promise<void> {
  const after = { jobId, step: { gt: step } };
  await tx.stepMetric.deleteMany({ where: after });
  await tx.trajectory.deleteMany({ where: after });
  await tx.collapseWarning.deleteMany({ where: after });
  if (checkpoints) await tx.checkpoint.deleteMany({ where: after });
}

function addEvent(tx: Tx, jobId: string, record: ChangeRecord, status: JobStatus) {
  return tx.jobEvent.create({ data: { jobId, type: record.type ?? 'state', message: record.message, data: record.data ?? { status } } });
}

function readRow(tx: Tx, jobId: string): Promise<JobRow | null> {
  return tx.job.findUnique({ where: { id: jobId }, include: { owner: true }, relationLoadStrategy: 'join' });
}

import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobLifecycleRepository } from '../repositories/job-lifecycle.repository';
import { JobRepository } from '../repositories/job.repository';
import { QueueRepository } from '../repositories/queue.repository';
import { SchedulingRepository, SchedulingRows, SchedulingWindow } from '../repositories/scheduling.repository';
import { WorkerRepository } from '../repositories/worker.repository';
import { TRANSITIONS } from './job-lifecycle';
import { PendingJob, Placement, planAdmission, SchedulingSnapshot, schedulingSnapshot, usageHorizonMs } from './fair-share';

const BATCH = 50;

/** Share of STARLAB_QUEUE_VIEW_MS after which a read of the plan copy starts the next read in the background. */
const REFRESH_AHEAD = 0.75;

/** A dispatched queued job older than this is checked for a lost carrier (Redis restarted). */
const RECONCILE_AFTER_MS = 10_000;

/** The scheduler's plan as read at `readAt`: its rows, what they reduce to, and every waiting job's placement. */
export interface Plan {
  rows: SchedulingRows;
  snapshot: SchedulingSnapshot;
  placements: Placement[];
  byJob: Map<string, Placement>;
  readAt: number;
}

/**
 * The scheduler (an outbox over Postgres, docs/scheduling.md): jobs are stored first; each pass
 * admits the waiting jobs that fit the capacity workers announce, in fair-share order
 * (fair-share.ts), and hands them to the queue of their kind of worker. A Redis outage delays
 * jobs but never loses or half-accepts them; after Redis comes back empty, admitted jobs whose
 * carrier is gone are admitted again.
 */
@Injectable()
export class DispatchService implements OnModuleDestroy {
  private readonly logger = new Logger(DispatchService.name);
  private timer: NodeJS.Timeout | null = null;
  /** The shared copy of the plan (see explain), the read in flight, and a count of changes that invalidate either. */
  private plan: Plan | null = null;
  private reading: Promise<Plan> | null = null;
  private generation = 0;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly jobs: JobRepository,
    private readonly lifecycle: JobLifecycleRepository,
    private readonly queue: QueueRepository,
    private readonly scheduling: SchedulingRepository,
    private readonly workers: WorkerRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.config.dispatchIntervalMs);
    void this.adoptLegacyCarriers();
    this.kick();
  }

  /**
   * Jobs sent under the former shared default prefix (`starlab`) before this deployment's
   * namespace was derived from its database: taken back and sent again under the namespace
   * (docs/configuration.md). Once, at start; retried while Postgres or Redis cannot answer.
   */
  private async adoptLegacyCarriers(): Promise<void> {
    for (let attempt = 1; this.timer; attempt++) {
      try {
        const taken = await this.queue.takeLegacyCarriers((ids) => this.jobs.existingIds(ids));
        if (taken.length > 0) {
          this.logger.warn(`moving ${taken.length} job(s) queued under the old shared prefix to this deployment's queue`);
          await this.jobs.markUndispatched(taken);
          this.kick();
        }
        return;
      } catch (error) {
        // The first tries race the Redis connection opening at start; only a lasting failure is news.
        if (attempt === 3) this.logger.warn(`could not look for jobs under the old queue prefix yet: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * attempt, 30_000)));
      }
    }
  }

  /** Runs a pass now (coalesced with one in flight). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((error: Error) => this.logger.warn(`dispatch failed: ${error.message}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves when no pass is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * The current plan: every waiting job's position and the reason it waits (read-only), at most
   * STARLAB_QUEUE_VIEW_MS old (default 1 s; 0 = read at every call). Reading it costs five
   * queries over every waiting job, so reads share one copy: each dispatch pass that admits
   * nothing leaves its own reading as the copy, a pass that admits something or a control
   * action through this replica (`changed`) drops it, and a submission through this replica
   * adds its job to it (`added`). What other replicas and the workers change shows within the
   * bound; what the caller changed through this replica shows at once. A read past three
   * quarters of the bound is served the copy and starts the next read in the background.
   */
  async explain(maxAgeMs = this.config.queueViewMs): Promise<Plan> {
    const plan = this.plan;
    if (plan) {
      const age = Date.now() - plan.readAt;
      if (age <= maxAgeMs) {
        // Refresh ahead: past three quarters of the bound the next read starts in the background,
        // so a request seldom waits for the five queries; this one is served the copy, in bound.
        if (age > REFRESH_AHEAD * maxAgeMs && !this.reading) this.readPlan().catch((error: Error) => this.logger.debug(`plan refresh: ${error.message}`));
        return plan;
      }
    }
    return this.reading ?? this.readPlan();
  }

  private readPlan(): Promise<Plan> {
    const generation = this.generation;
    const reading = this.scheduling
      .state(this.window())
      .then((rows) => this.keep(this.planOf(rows), generation))
      .finally(() => {
        if (this.reading === reading) this.reading = null;
      });
    this.reading = reading;
    return reading;
  }

  /** A queued job's placement in the plan, reading the plan again once if the job is not in the copy (submitted or resumed through another replica). */
  async placementOf(jobId: string): Promise<Placement | null> {
    const placement = (await this.explain()).byJob.get(jobId);
    if (placement) return placement;
    return (await this.explain(0)).byJob.get(jobId) ?? null;
  }

  /**
   * A job this replica has just stored as waiting: placed into the copy of the plan in memory
   * (no read), so the submission's answer and the next reads show its position. A new owner's
   * quota and usage are not in the copy: then the copy is dropped and the next read takes them.
   */
  added(job: PendingJob): void {
    const plan = this.plan;
    this.generation++;
    this.reading = null;
    if (!plan || !plan.rows.owners.some((o) => o.id === job.ownerId)) {
      this.plan = null;
      return;
    }
    this.plan = this.planOf({ ...plan.rows, pending: [...plan.rows.pending, job] }, plan.readAt);
  }

  /** Something the plan depends on changed through this replica: the next read takes it from Postgres. */
  changed(): void {
    this.generation++;
    this.plan = null;
    this.reading = null;
  }

  private planOf(rows: SchedulingRows, readAt = Date.now()): Plan {
    const snapshot = this.snapshot(rows);
    const placements = planAdmission(snapshot.pending, snapshot.users, snapshot.capacity);
    return { rows, snapshot, placements, byJob: new Map(placements.map((p) => [p.jobId, p])), readAt };
  }

  /** Keeps a plan read when the copy was at `generation`, unless something changed since. */
  private keep(plan: Plan, generation: number): Plan {
    if (generation === this.generation) this.plan = plan;
    return plan;
  }

  private window(): SchedulingWindow {
    return { workerStaleMs: this.config.scheduling.workerStaleMs, usageHorizonMs: usageHorizonMs(this.config.scheduling.fairShareHalfLifeS) };
  }

  private snapshot(rows: SchedulingRows): SchedulingSnapshot {
    return schedulingSnapshot(rows, { defaultMaxRunning: this.config.scheduling.maxRunningJobs, halfLifeS: this.config.scheduling.fairShareHalfLifeS });
  }

  private async pass(): Promise<void> {
    const generation = this.generation;
    let read: Plan | null = null;
    const admitted = await this.scheduling.admitUnderLock(this.window(), async (rows) => {
      read = this.planOf(rows);
      const { placements } = read;
      const sent: { jobId: string; device: 'gpu' | 'cpu' }[] = [];
      for (const device of ['gpu', 'cpu'] as const) {
        const ids = placements.filter((p) => p.admit === device).map((p) => p.jobId);
        try {
          await this.queue.enqueueTrainingBatch(ids, device);
          sent.push(...ids.map((jobId) => ({ jobId, device })));
        } catch {
          // The queue is down: these stay stored and undispatched; the next pass tries again.
        }
      }
      return sent;
    });
    if (admitted) this.logger.debug(`admitted ${admitted} job(s)`);
    // Nothing admitted: what the pass read is the plan as it stands (kept unless changed since).
    if (admitted === 0 && read) this.keep(read, generation);
    else if (admitted) this.changed();
    await this.reconcile();
  }

  private async reconcile(): Promise<void> {
    const suspects = await this.jobs.dispatchedQueued(new Date(Date.now() - RECONCILE_AFTER_MS), BATCH);
    const lost: string[] = [];
    for (const { id, dispatchedDevice } of suspects) {
      if (!dispatchedDevice || !(await this.queue.hasTrainingJob(id, dispatchedDevice))) lost.push(id);
    }
    if (lost.length > 0) {
      this.logger.warn(`re-admitting ${lost.length} queued job(s) whose queue entry is gone`);
      await this.jobs.markUndispatched(lost);
      this.again = true;
    }
    await this.rescueOrphans();
  }

  /**
   * A running job whose worker stopped heart-beating holds no slot: its attempt is over, whether
   * its worker died or is frozen (then its next write is refused: the attempt is fenced). Back to
   * the queue, its usage closed when the worker was last heard from; it resumes from its last
   * checkpoint. If the queue still has its entry, the entry is given back by BullMQ's stall
   * detection or re-sent after the entry is gone; either way one attempt runs it.
   */
  private async rescueOrphans(): Promise<void> {
    const alive = (await this.workers.alive(this.config.scheduling.workerStaleMs)).map((w) => w.id);
    for (const job of await this.jobs.runningOnDeadWorkers(alive, BATCH)) {
      const requeued = await this.lifecycle.transition(
        job.id,
        TRANSITIONS.rescue,
        { dispatchedAt: null, dispatchedDevice: null, workerId: null },
        { message: `requeued: worker ${job.workerId ?? '?'} stopped answering`, data: { status: 'queued', worker: job.workerId } },
        { attempt: job.attempt, workerId: job.workerId },
      );
      if (requeued) {
        this.logger.warn(`job ${job.id}: requeued from dead worker ${job.workerId}`);
        this.again = true;
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
  }
}

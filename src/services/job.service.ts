import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { JobListView, JobView, ListJobsQuery } from '../contracts/jobs.dto';
import { ControlRequest, IDEMPOTENCY_KEY_MAX } from '../contracts/jobs.dto';
import { JobLifecycleRepository } from '../repositories/job-lifecycle.repository';
import { JobRepository, JobRow, NewJob } from '../repositories/job.repository';
import { ProgressRepository } from '../repositories/progress.repository';
import { QueueRepository } from '../repositories/queue.repository';
import { UserRepository } from '../repositories/user.repository';
import { EnvironmentServerRepository } from '../repositories/environment-server.repository';
import { JobSpec, parseJobSpec } from '../training/spec/validate';
import { canControl, canRead, requireAdmin } from './access';
import type { Principal } from './auth.service';
import { Conflict, NotFound, QuotaExceeded, Unprocessable, ValidationFailed } from './errors';
import { decodeCursor, encodeCursor, toJobView } from './job-view';
import { DispatchService } from './dispatch.service';
import { jobProgress } from './job-progress';
import { decideControl, outranked, refusal, TRANSITIONS } from './job-lifecycle';
import type { Placement } from './fair-share';
import { APP_CONFIG, AppConfig } from '../config/config';

const IDEMPOTENCY_KEY = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX}}$`);

/** A 400 naming the header unless `key` is absent or 1–IDEMPOTENCY_KEY_MAX visible ASCII characters. */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new ValidationFailed([{ field: 'header.Idempotency-Key', message: `must be 1–${IDEMPOTENCY_KEY_MAX} visible ASCII characters` }]);
  }
}

/** What a control did: `pending` when it was recorded for the running attempt (HTTP 202), not yet carried out. */
export interface ControlAnswer {
  job: JobView;
  pending: boolean;
}

/** Submitting, reading and controlling jobs (the API side of the job lifecycle). */
@Injectable()
export class JobService {
  private readonly logger = new Logger(JobService.name);

  constructor(
    private readonly jobs: JobRepository,
    private readonly lifecycle: JobLifecycleRepository,
    private readonly users: UserRepository,
    private readonly queue: QueueRepository,
    private readonly dispatch: DispatchService,
    private readonly progress: ProgressRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly environments: EnvironmentServerRepository,
  ) {}

  /**
   * Validates and stores a job, then nudges the dispatcher. With an Idempotency-Key, the same
   * key and body return the first job (replayed), the same key with another body is a 422.
   */
  async submit(principal: Principal, body: unknown, idempotencyKey: string | undefined): Promise<{ job: JobView; replayed: boolean }> {
    checkIdempotencyKey(idempotencyKey);
    const spec = parseJobSpec(body, await this.environments.definitionFor(body));
    const requestHash = idempotencyKey ? sha256(stableJson(body)) : null;
    if (idempotencyKey) {
      const existing = await this.jobs.findByIdempotencyKey(principal.userId, idempotencyKey);
      if (existing) return { job: await this.view(this.replay(existing, requestHash)), replayed: true };
    }
    let job: JobRow;
    try {
      job = await this.jobs.create({ ...newJob(principal, spec), idempotencyKey: idempotencyKey ?? null, requestHash }, (owner) => this.admitQueued(owner));
    } catch (error) {
      // A concurrent duplicate with the same key won the insert: answer as its replay.
      const winner = idempotencyKey && isUniqueViolation(error) ? await this.jobs.findByIdempotencyKey(principal.userId, idempotencyKey) : null;
      if (!winner) throw error;
      return { job: await this.view(this.replay(winner, requestHash)), replayed: true };
    }
    this.logger.log(`job ${job.id} submitted by ${principal.name}: ${spec.environment.id}/${spec.algorithm.id}, ${spec.training.steps} steps`);
    this.dispatch.added({ id: job.id, ownerId: job.ownerId, priority: job.priority, device: job.device, createdAt: job.createdAt });
    this.dispatch.kick();
    return { job: await this.view(job), replayed: false };
  }

  async list(principal: Principal, query: ListJobsQuery): Promise<JobListView> {
    const before = query.after ? decodeCursor(query.after) : undefined;
    if (before === null) throw new ValidationFailed([{ field: 'query.after', message: 'is not a cursor returned by this API' }]);
    const limit = query.limit ?? 20;
    const rows = await this.jobs.list({
      ownerIds: await this.visibleOwners(principal, query.owner),
      status: query.status,
      label: parseLabel(query.label),
      nameContains: query.q,
      environment: query.environment,
      parentJobId: query.forkedFrom,
      experimentId: query.experiment,
      archived: query.archived ?? false,
      before,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const plan = page.some((job) => job.status === 'queued') ? await this.placements() : new Map<string, Placement>();
    return {
      data: await this.withProgress(page, page.map((job) => this.viewWith(job, plan))),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /** The job's row may be up to STARLAB_JOB_VIEW_MS old (JobRowCache): the caller's own changes show at once. */
  async get(principal: Principal, id: string): Promise<JobView> {
    return this.view(await this.readable(principal, id, 'recent'));
  }

  /** A job the caller may read, else 404 (another user's job is not disclosed). Decisions read it `fresh`. */
  async readable(principal: Principal, id: string, read: 'fresh' | 'recent' = 'fresh'): Promise<JobRow> {
    const job = !isUuid(id) ? null : await (read === 'recent' ? this.jobs.findRecent(id) : this.jobs.findById(id));
    if (!job || !canRead(principal, job)) throw new NotFound('job', id);
    return job;
  }

  /**
   * Queued or paused: cancelled at once (200). Running: the request is recorded, and the
   * attempt kills its training within a poll interval and ends the job `cancelled` (202); a
   * cancel outranks every other request and is never replaced. Ended: 409 naming its state.
   */
  cancel(principal: Principal, id: string): Promise<ControlAnswer> {
    return this.control(principal, id, 'cancel');
  }

  /** Queued: paused at once (200). Running: the attempt checkpoints after its current step (or abandons its warm-up) and pauses (202). */
  pause(principal: Principal, id: string): Promise<ControlAnswer> {
    return this.control(principal, id, 'pause');
  }

  /**
   * Admins: a running job checkpoints after its current step, goes back to the queue and later
   * resumes exactly (202). A member who can read the job is told it is for admins (403); one who
   * cannot learns nothing of it (404).
   */
  async preempt(principal: Principal, id: string): Promise<ControlAnswer> {
    const job = await this.readable(principal, id);
    requireAdmin(principal, 'preempt jobs');
    return this.control(principal, id, 'preempt', job);
  }

  /** Paused: back in the queue; it resumes from its last checkpoint. */
  async resume(principal: Principal, id: string): Promise<JobView> {
    const job = await this.controllable(principal, id);
    const resumed = await this.lifecycle.transition(id, TRANSITIONS.resume, { dispatchedAt: null, dispatchedDevice: null, controlRequest: null }, { message: `resumed by ${principal.name}` });
    if (!resumed) throw new Conflict(`job ${id} ${refusal('resume', (await this.readable(principal, id)).status) ?? `is ${job.status}`}`);
    this.dispatch.changed();
    this.dispatch.kick();
    return this.view(resumed);
  }

  /**
   * A control as the lifecycle decides it for the job's state (job-lifecycle.ts): applied at
   * once, recorded for the running attempt, or refused. Each step is a compare-and-set; a job
   * that moved meanwhile is read again and decided again.
   */
  private async control(principal: Principal, id: string, control: ControlRequest, seen?: JobRow): Promise<ControlAnswer> {
    let job = seen ?? (await this.controllable(principal, id));
    for (let tries = 0; tries < 3; tries++, job = await this.controllable(principal, id)) {
      const decision = decideControl({ status: job.status, controlRequest: job.controlRequest as ControlRequest | null }, control);
      if (decision.kind === 'refuse') throw new Conflict(`job ${id} ${decision.reason}`);
      if (decision.kind === 'pending') return { job: await this.view(job), pending: true };
      if (decision.kind === 'apply') {
        const data = decision.event === 'cancelWaiting' ? { finishedAt: new Date(), controlRequest: null, dispatchedAt: null } : { dispatchedAt: null, dispatchedDevice: null };
        const changed = await this.lifecycle.transition(id, TRANSITIONS[decision.event], data, { message: `${decision.event === 'cancelWaiting' ? 'cancelled' : 'paused'} by ${principal.name}` });
        if (!changed) continue;
        await this.queue.removeWaiting(id).catch(() => undefined);
        this.queueChanged(job);
        return { job: await this.view(changed), pending: false };
      }
      const message = control === 'preempt' ? `preemption requested by admin ${principal.name}` : `${control} requested by ${principal.name}`;
      const requested = await this.lifecycle.requestControl(id, control, outranked(control), { message, data: { request: control, actor: principal.name } });
      if (!requested) continue;
      this.logger.log(`job ${id}: ${message}`);
      return { job: await this.view(requested), pending: true };
    }
    throw new Conflict(`job ${id} keeps changing state; read it and try again`);
  }

  /** A queued job left the queue: the others' positions move (and an admitted one's slot is free for the next). */
  private queueChanged(job: JobRow): void {
    if (job.status !== 'queued') return;
    this.dispatch.changed();
    this.dispatch.kick();
  }

  private async controllable(principal: Principal, id: string): Promise<JobRow> {
    const job = await this.readable(principal, id);
    if (!canControl(principal, job)) throw new NotFound('job', id);
    return job;
  }

  private replay(existing: JobRow, requestHash: string | null): JobRow {
    if (existing.requestHash !== requestHash) {
      throw new Unprocessable('this Idempotency-Key was already used with a different request body');
    }
    return existing;
  }

  /** A waiting job's place comes from the scheduler's shared plan (DispatchService.explain: at most STARLAB_QUEUE_VIEW_MS old). */
  async view(job: JobRow): Promise<JobView> {
    const waiting = job.status === 'queued' && !job.dispatchedAt ? await this.dispatch.placementOf(job.id) : null;
    const [view] = await this.withProgress([job], [this.viewWith(job, waiting ? new Map([[job.id, waiting]]) : new Map())]);
    return view;
  }

  /** Running jobs' warm-up progress and ETA, from what they have reported (three queries a page). */
  private async withProgress(rows: JobRow[], views: JobView[]): Promise<JobView[]> {
    const running = rows.filter((row) => row.status === 'running');
    if (running.length === 0) return views;
    const readings = await this.progress.readings(running.map((row) => row.id));
    const now = new Date();
    return views.map((view, i) => (rows[i].status === 'running' ? { ...view, ...jobProgress(rows[i], readings.get(rows[i].id), now) } : view));
  }

  /** A queued job's place in the scheduler's current plan, and why it waits. */
  private viewWith(job: JobRow, plan: Map<string, Placement>): JobView {
    if (job.status !== 'queued') return toJobView(job);
    if (job.dispatchedAt) return toJobView(job, { position: 0, reason: `admitted to a ${job.dispatchedDevice ?? ''} worker; starting`.replace('  ', ' ') });
    const placement = plan.get(job.id);
    return toJobView(job, placement ? { position: placement.position, reason: placement.reason } : { position: 1, reason: 'waiting for the scheduler' });
  }

  private async placements(): Promise<Map<string, Placement>> {
    return (await this.dispatch.explain()).byJob;
  }

  /**
   * Per-user cap on waiting jobs (docs/scheduling.md): a clear 429 with the numbers. Called with
   * the owner's queued count under the owner's lock (JobRepository.create and createFork), so
   * concurrent submissions are counted one after the other.
   */
  admitQueued(owner: { queued: number; maxQueuedJobs: number | null }): void {
    const limit = owner.maxQueuedJobs ?? this.config.scheduling.maxQueuedJobs;
    if (owner.queued >= limit) {
      throw new QuotaExceeded(`you have ${owner.queued} queued job(s); your quota is ${limit}. Wait for some to start, or cancel some.`, 60);
    }
  }

  /** Owner ids whose jobs the caller may list (null = all). */
  private async visibleOwners(principal: Principal, owner: string | undefined): Promise<string[] | null> {
    if (owner) {
      const user = await this.users.findUser(owner);
      const visible = user && (principal.role === 'admin' || user.id === principal.userId || (principal.teamSharesJobs && user.teamId === principal.teamId));
      return visible ? [user.id] : [];
    }
    if (principal.role === 'admin') return null;
    return [principal.userId];
  }
}

/** The row of a job the caller submits (or forks) with this resolved spec. */
export function newJob(principal: Principal, spec: JobSpec): NewJob {
  return {
    ownerId: principal.userId,
    name: spec.name,
    spec: spec as unknown as object,
    priority: spec.priority,
    labels: spec.labels,
    device: spec.device,
    totalSteps: spec.training.steps,
    idempotencyKey: null,
    requestHash: null,
  };
}

function parseLabel(label: string | undefined): { key: string; value: string } | undefined {
  if (!label) return undefined;
  const at = label.indexOf('=');
  return { key: label.slice(0, at), value: label.slice(at + 1) };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with sorted keys, so that key order does not change an idempotency hash. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}

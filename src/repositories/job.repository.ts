import { Injectable } from '@nestjs/common';
import type { JobStatus, Prisma } from '../generated/prisma/client';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import { PrismaService } from './prisma.service';

export type JobRow = Prisma.JobGetPayload<{ include: { owner: true } }>;
export type JobEventType = 'state' | 'step' | 'checkpoint' | 'warning' | 'log' | 'audit';

export interface NewJob {
  ownerId: string;
  name: string;
  spec: Prisma.InputJsonValue;
  priority: number;
  labels: Record<string, string>;
  device: 'gpu' | 'cpu' | 'any';
  totalSteps: number;
  idempotencyKey: string | null;
  requestHash: string | null;
}

export interface JobListFilter {
  /** null = every owner (admins). */
  ownerIds: string[] | null;
  status?: JobStatus;
  label?: { key: string; value: string };
  /** Name contains (case-insensitive). */
  nameContains?: string;
  environment?: string;
  parentJobId?: string;
  experimentId?: string;
  /** true: only archived jobs; false: only the others. */
  archived?: boolean;
  before?: { createdAt: Date; id: string };
  limit: number;
}

const JOB_BY_ID = { name: 'job-by-id', text: 'SELECT j.*, to_jsonb(u) AS owner FROM jobs j JOIN users u ON u.id = j.owner_id WHERE j.id = $1::uuid' };

/**
 * A `jobs` row with its owner as `pg` returns it, in the model's shape. Every column is the
 * snake_case of its field (the schema's `@map`s follow that rule); the owner comes as jsonb, so
 * its timestamps are text until parsed here.
 */
function jobRowOf(row: Record<string, unknown>): JobRow {
  const { owner, ...job } = camelCase(row);
  const user = camelCase(owner as Record<string, unknown>);
  for (const field of ['createdAt', 'disabledAt']) if (typeof user[field] === 'string') user[field] = new Date(user[field] as string);
  return { ...job, owner: user } as unknown as JobRow;
}

function camelCase(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column in row) out[fieldOf(column)] = row[column];
  return out;
}

/** A column's field name, worked out once per column (this runs on every job GET). */
const FIELDS = new Map<string, string>();
function fieldOf(column: string): string {
  let field = FIELDS.get(column);
  if (field === undefined) FIELDS.set(column, (field = column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())));
  return field;
}

/** Jobs and their ordered events. */
/** Sees the owner's queued jobs and quota before a job is added; throws to refuse it. */
export type Admit = (owner: { queued: number; maxQueuedJobs: number | null }) => void;

/** Locks the owner's row, so concurrent submissions of one user are counted one after the other, and asks `admit`. */
export async function admitUnderLock(tx: Prisma.TransactionClient, ownerId: string, admit: Admit): Promise<void> {
  const [owner] = await tx.$queryRaw<{ max_queued_jobs: number | null }[]>`SELECT max_queued_jobs FROM users WHERE id = ${ownerId}::uuid FOR UPDATE`;
  admit({ queued: await tx.job.count({ where: { ownerId, status: 'queued' } }), maxQueuedJobs: owner?.max_queued_jobs ?? null });
}

@Injectable()
export class JobRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * Stores the job and its first event together, so a submitted job always has a history.
   * `admit` sees the owner's queued jobs and quota first, under a lock on the owner's row, so
   * concurrent submissions of one user are counted one after the other; it throws to refuse.
   */
  create(job: NewJob, admit: Admit = () => undefined) {
    return this.prisma.$transaction(async (tx) => {
      await admitUnderLock(tx, job.ownerId, admit);
      const created = await tx.job.create({ data: { ...job, status: 'queued' }, include: { owner: true } });
      await tx.jobEvent.create({ data: { jobId: created.id, type: 'state', message: 'queued', data: { status: 'queued' } } });
      return created;
    });
  }

  /**
   * A fork: the new job, its first event and a copy of the source checkpoint as its own (copied
   * inside Postgres, the bytes never travel), together. The worker resumes it from that copy.
   */
  createFork(job: NewJob & { parentJobId: string; parentStep: number; progress: number }, checkpointId: string, message: string, admit: Admit = () => undefined) {
    return this.prisma.$transaction(async (tx) => {
      await admitUnderLock(tx, job.ownerId, admit);
      const created = await tx.job.create({ data: { ...job, currentStep: job.parentStep, status: 'queued' }, include: { owner: true } });
      await tx.$executeRaw`
        INSERT INTO checkpoints (id, job_id, step, bytes, storage_uri, size_bytes, health, created_at)
        SELECT gen_random_uuid(), ${created.id}::uuid, step, bytes, storage_uri, size_bytes, health, now() FROM checkpoints WHERE id = ${checkpointId}::uuid`;
      await tx.jobEvent.create({ data: { jobId: created.id, type: 'state', message, data: { status: 'queued', parentJobId: job.parentJobId, parentStep: job.parentStep } } });
      return created;
    });
  }

  /**
   * Every job GET, and every results read that checks the job first, starts here: one prepared
   * statement with the owner joined (PrismaService.prepared), mapped to exactly what
   * `job.findUnique({ include: { owner: true } })` returns (test/integration/job-repository.spec.ts).
   */
  async findById(id: string): Promise<JobRow | null> {
    const [row] = await this.prisma.prepared(JOB_BY_ID.name, JOB_BY_ID.text, [id]);
    return row ? jobRowOf(row) : null;
  }

  /** `findById`, at most STARLAB_JOB_VIEW_MS old (JobRowCache): for GET /v1/jobs/{id} only; decisions read fresh rows. */
  findRecent(id: string): Promise<JobRow | null> {
    return this.cache.read(id, () => this.findById(id));
  }

  findByIdempotencyKey(ownerId: string, idempotencyKey: string): Promise<JobRow | null> {
    return this.prisma.job.findUnique({ where: { ownerId_idempotencyKey: { ownerId, idempotencyKey } }, include: { owner: true } });
  }

  /** Newest first; `before` is the (createdAt, id) of the last row of the previous page. */
  list(filter: JobListFilter): Promise<JobRow[]> {
    const where: Prisma.JobWhereInput = {
      ...(filter.ownerIds ? { ownerId: { in: filter.ownerIds } } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.label ? { labels: { path: [filter.label.key], equals: filter.label.value } } : {}),
      ...(filter.nameContains ? { name: { contains: filter.nameContains, mode: 'insensitive' as const } } : {}),
      ...(filter.environment ? { spec: { path: ['environment', 'id'], equals: filter.environment } } : {}),
      ...(filter.parentJobId ? { parentJobId: filter.parentJobId } : {}),
      ...(filter.experimentId ? { experimentId: filter.experimentId } : {}),
      ...(filter.archived === undefined ? {} : { archivedAt: filter.archived ? { not: null } : null }),
      ...(filter.before
        ? { OR: [{ createdAt: { lt: filter.before.createdAt } }, { createdAt: filter.before.createdAt, id: { lt: filter.before.id } }] }
        : {}),
    };
    return this.prisma.job.findMany({ where, include: { owner: true }, relationLoadStrategy: 'join', orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: filter.limit });
  }

  async ownerNames(ids: string[]): Promise<Map<string, string>> {
    const users = await this.prisma.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
    return new Map(users.map((u) => [u.id, u.name]));
  }

  /** The step the job's latest rollback returned to (from its audit event), or null. */
  async lastRollbackTarget(jobId: string): Promise<number | null> {
    const event = await this.prisma.jobEvent.findFirst({ where: { jobId, type: 'audit', data: { path: ['action'], equals: 'rollback' } }, orderBy: { id: 'desc' } });
    const toStep = (event?.data as { toStep?: unknown } | null)?.toStep;
    return typeof toStep === 'number' ? toStep : null;
  }

  eventsAfter(jobId: string, afterId: bigint, limit: number) {
    return this.prisma.jobEvent.findMany({ where: { jobId, id: { gt: afterId } }, orderBy: { id: 'asc' }, take: limit });
  }

  /** Queued jobs marked as sent a while ago: their carrier may have been lost with Redis. */
  dispatchedQueued(olderThan: Date, limit: number) {
    return this.prisma.job.findMany({ where: { status: 'queued', dispatchedAt: { lt: olderThan } }, select: { id: true, dispatchedDevice: true }, take: limit });
  }

  /** Running jobs the database says `workerId` holds. */
  runningOn(workerId: string) {
    return this.prisma.job.findMany({ where: { status: 'running', workerId }, select: { id: true, attempt: true } });
  }

  /** Running jobs whose worker is not among `aliveWorkers` (it stopped heart-beating). */
  runningOnDeadWorkers(aliveWorkers: string[], limit: number) {
    return this.prisma.job.findMany({
      where: { status: 'running', OR: [{ workerId: null }, { workerId: { notIn: aliveWorkers } }] },
      select: { id: true, workerId: true, attempt: true, dispatchedDevice: true },
      take: limit,
    });
  }

  /** Those of `ids` that are jobs of this database (ids from elsewhere may not even be uuids). */
  async existingIds(ids: string[]): Promise<string[]> {
    const uuids = ids.filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    if (uuids.length === 0) return [];
    return (await this.prisma.job.findMany({ where: { id: { in: uuids } }, select: { id: true } })).map((job) => job.id);
  }

  markUndispatched(ids: string[]) {
    return this.cache.dropAfter(ids, () => this.prisma.job.updateMany({ where: { id: { in: ids }, status: 'queued' }, data: { dispatchedAt: null, dispatchedDevice: null } }));
  }
}

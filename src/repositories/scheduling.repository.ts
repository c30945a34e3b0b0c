import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import { PrismaService } from './prisma.service';
import { HELD_UNTIL } from './usage.repository';

/** Which rows the scheduler reads: workers seen within `workerStaleMs`, usage within `usageHorizonMs`. */
export interface SchedulingWindow {
  workerStaleMs: number;
  usageHorizonMs: number;
}

type Tx = Prisma.TransactionClient;

/** Arbitrary constant: the advisory lock that serialises admission across API replicas. */
const ADMISSION_LOCK = 0x5a1ab;

/** The rows admission is decided from (the decision itself is fair-share's), and the lock that serialises it. */
@Injectable()
export class SchedulingRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * Runs one admission pass under a transaction-level advisory lock, so replicas never admit
   * the same capacity twice; `admit` returns the jobs it queued (with the device) to be marked.
   * Returns null if another replica holds the lock.
   */
  async admitUnderLock(window: SchedulingWindow, admit: (state: SchedulingRows) => Promise<{ jobId: string; device: 'gpu' | 'cpu' }[]>): Promise<number | null> {
    const marked: string[] = [];
    return this.cache.dropAfter(marked, () => this.prisma.$transaction(
      async (tx) => {
        const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${ADMISSION_LOCK}) AS locked`;
        if (!locked) return null;
        const admitted = await admit(await this.state(window, tx));
        const now = new Date();
        for (const device of ['gpu', 'cpu'] as const) {
          const ids = admitted.filter((a) => a.device === device).map((a) => a.jobId);
          marked.push(...ids);
          if (ids.length > 0) await tx.job.updateMany({ where: { id: { in: ids }, status: 'queued', dispatchedAt: null }, data: { dispatchedAt: now, dispatchedDevice: device } });
        }
        return admitted.length;
      },
      { timeout: 30_000 },
    ));
  }

  /** Waiting and active jobs, live workers, and the quotas and recent usage of the jobs' owners. */
  async state(window: SchedulingWindow, tx: Tx = this.prisma) {
    const now = new Date();
    const [pending, active, workers] = await Promise.all([
      tx.job.findMany({ where: { status: 'queued', dispatchedAt: null }, select: { id: true, ownerId: true, priority: true, device: true, createdAt: true } }),
      // Bounded by the slots in the lab; the fields past the first four are for GET /v1/queue.
      tx.job.findMany({
        where: { OR: [{ status: 'running' }, { status: 'queued', dispatchedAt: { not: null } }] },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: { ownerId: true, status: true, workerId: true, dispatchedDevice: true, id: true, priority: true, device: true, currentStep: true, totalSteps: true },
      }),
      tx.worker.findMany({
        where: { lastHeartbeatAt: { gte: new Date(now.getTime() - window.workerStaleMs) } },
        orderBy: { id: 'asc' },
        select: { id: true, device: true, slots: true, running: true, backend: true, lastHeartbeatAt: true },
      }),
    ]);
    const ownerIds = [...new Set([...pending.map((j) => j.ownerId), ...active.map((j) => j.ownerId)])];
    const horizon = new Date(now.getTime() - window.usageHorizonMs);
    const [owners, usage] = await Promise.all([
      tx.user.findMany({ where: { id: { in: ownerIds } }, select: { id: true, name: true, maxRunningJobs: true } }),
      // Open records end, for fair share, when their worker was last heard from: only held slot time counts.
      tx.$queryRaw<{ userId: string; startedAt: Date; endedAt: Date }[]>`
        SELECT r.user_id AS "userId", r.started_at AS "startedAt", ${HELD_UNTIL} AS "endedAt"
        FROM usage_records r WHERE r.user_id = ANY(${ownerIds}::uuid[]) AND (r.ended_at IS NULL OR r.ended_at >= ${horizon})`,
    ]);
    return { now, pending, active, workers, owners, usage };
  }
}

export type SchedulingRows = Awaited<ReturnType<SchedulingRepository['state']>>;

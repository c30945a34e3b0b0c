import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import type { Capacity, Device, PendingJob, UserShare } from '../services/fair-share';
import { decayedUsage } from '../services/fair-share';
import { PrismaService } from './prisma.service';

/** What admission decides from: waiting jobs, each user's share and quota, free capacity. */
export interface SchedulingSnapshot {
  pending: PendingJob[];
  users: UserShare[];
  capacity: Capacity;
  workers: { id: string; device: Device; slots: number; running: number; backend: string; lastHeartbeatAt: Date }[];
}

type Tx = Prisma.TransactionClient;

/** Arbitrary constant: the advisory lock that serialises admission across API replicas. */
const ADMISSION_LOCK = 0x5a1ab;

@Injectable()
export class SchedulingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Runs one admission pass under a transaction-level advisory lock, so replicas never admit
   * the same capacity twice; `admit` returns the jobs it queued (with the device) to be marked.
   * Returns null if another replica holds the lock.
   */
  async admitUnderLock(
    settings: { defaultMaxRunning: number; halfLifeS: number; workerStaleMs: number },
    admit: (snapshot: SchedulingSnapshot) => Promise<{ jobId: string; device: Device }[]>,
  ): Promise<number | null> {
    return this.prisma.$transaction(
      async (tx) => {
        const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${ADMISSION_LOCK}) AS locked`;
        if (!locked) return null;
        const admitted = await admit(await this.snapshot(settings, tx));
        const now = new Date();
        for (const device of ['gpu', 'cpu'] as const) {
          const ids = admitted.filter((a) => a.device === device).map((a) => a.jobId);
          if (ids.length > 0) await tx.job.updateMany({ where: { id: { in: ids }, status: 'queued', dispatchedAt: null }, data: { dispatchedAt: now, dispatchedDevice: device } });
        }
        return admitted.length;
      },
      { timeout: 30_000 },
    );
  }

  async snapshot(settings: { defaultMaxRunning: number; halfLifeS: number; workerStaleMs: number }, tx: Tx = this.prisma): Promise<SchedulingSnapshot> {
    const now = new Date();
    const [pendingRows, activeRows, workers] = await Promise.all([
      tx.job.findMany({ where: { status: 'queued', dispatchedAt: null }, select: { id: true, ownerId: true, priority: true, device: true, createdAt: true } }),
      tx.job.findMany({
        where: { OR: [{ status: 'running' }, { status: 'queued', dispatchedAt: { not: null } }] },
        select: { ownerId: true, status: true, workerId: true, dispatchedDevice: true },
      }),
      tx.worker.findMany({ where: { lastHeartbeatAt: { gte: new Date(now.getTime() - settings.workerStaleMs) } }, orderBy: { id: 'asc' } }),
    ]);
    const ownerIds = [...new Set([...pendingRows.map((j) => j.ownerId), ...activeRows.map((j) => j.ownerId)])];
    const horizon = new Date(now.getTime() - 10 * settings.halfLifeS * 1000);
    const [owners, usage] = await Promise.all([
      tx.user.findMany({ where: { id: { in: ownerIds } }, select: { id: true, maxRunningJobs: true } }),
      tx.usageRecord.findMany({ where: { userId: { in: ownerIds }, OR: [{ endedAt: null }, { endedAt: { gte: horizon } }] }, select: { userId: true, startedAt: true, endedAt: true } }),
    ]);
    const deviceOf = new Map(workers.map((w) => [w.id, w.device as Device]));
    const capacity: Capacity = { slots: { gpu: 0, cpu: 0 }, busy: { gpu: 0, cpu: 0 } };
    for (const w of workers) capacity.slots[w.device as Device] += w.slots;
    for (const job of activeRows) {
      // A running job on a worker that stopped heart-beating holds no live slot.
      const device = job.status === 'running' ? (job.workerId ? deviceOf.get(job.workerId) : undefined) : (job.dispatchedDevice as Device | null);
      if (device) capacity.busy[device]++;
    }
    return {
      pending: pendingRows.map((j) => ({ ...j, device: j.device as PendingJob['device'] })),
      users: owners.map((u) => ({
        userId: u.id,
        active: activeRows.filter((j) => j.ownerId === u.id).length,
        maxRunning: u.maxRunningJobs ?? settings.defaultMaxRunning,
        decayedUsage: decayedUsage(usage.filter((r) => r.userId === u.id), now, settings.halfLifeS),
      })),
      capacity,
      workers: workers.map((w) => ({ id: w.id, device: w.device as Device, slots: w.slots, running: w.running, backend: w.backend, lastHeartbeatAt: w.lastHeartbeatAt })),
    };
  }
}

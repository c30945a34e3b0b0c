import { Inject, Injectable } from '@nestjs/common';
import type { QueueQuery, QueueView, UsageQuery, UsageView } from '../contracts/lab.dto';
import { APP_CONFIG, AppConfig } from '../config/config';
import { UsageRepository } from '../repositories/usage.repository';
import type { Principal } from './auth.service';
import { DispatchService } from './dispatch.service';
import { ValidationFailed } from './errors';

const WEEK_MS = 7 * 86_400_000;

/** The lab at a glance: who waits for what and why (GET /v1/queue), and who used what (GET /v1/usage). */
@Injectable()
export class LabService {
  constructor(
    private readonly dispatch: DispatchService,
    private readonly usage: UsageRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The plan (DispatchService.explain: at most STARLAB_QUEUE_VIEW_MS old) with no further
   * query: admitted jobs first, then every waiting job in plan order, a page at a time. The
   * cursor is a place in that order, so a page after the plan moved continues from the same
   * place, not the same job.
   */
  async queue(principal: Principal, query: QueueQuery = {}): Promise<QueueView> {
    const start = query.after === undefined ? 0 : decodeQueueCursor(query.after);
    if (start === null) throw new ValidationFailed([{ field: 'query.after', message: 'is not a cursor returned by this API' }]);
    const limit = query.limit ?? 100;
    const { rows, snapshot, placements } = await this.dispatch.explain();
    const names = new Map(rows.owners.map((o) => [o.id, o.name]));
    const pendingById = new Map(snapshot.pending.map((j) => [j.id, j]));
    // Other users' jobs appear by owner only: their ids are not disclosed to members.
    const visibleId = (ownerId: string, jobId: string) => (principal.role === 'admin' || ownerId === principal.userId ? jobId : null);
    const admitted = rows.active.filter((j) => j.status === 'queued');
    const waitingCount = admitted.length + placements.length;
    const page = Array.from({ length: Math.max(0, Math.min(limit, waitingCount - start)) }, (_, i) => {
      const at = start + i;
      if (at < admitted.length) {
        const j = admitted[at];
        return { position: 0, owner: names.get(j.ownerId) ?? j.ownerId, jobId: visibleId(j.ownerId, j.id), device: j.dispatchedDevice ?? j.device, priority: j.priority, reason: 'admitted; a worker is starting it', admitted: true };
      }
      const p = placements[at - admitted.length];
      const job = pendingById.get(p.jobId)!;
      return { position: p.position, owner: names.get(p.ownerId) ?? p.ownerId, jobId: visibleId(p.ownerId, p.jobId), device: job.device, priority: job.priority, reason: p.reason, admitted: false };
    });
    const more = start + page.length < waitingCount;
    return {
      capacity: { gpu: { slots: snapshot.capacity.slots.gpu, busy: snapshot.capacity.busy.gpu }, cpu: { slots: snapshot.capacity.slots.cpu, busy: snapshot.capacity.busy.cpu } },
      workers: snapshot.workers.map((w) => ({ ...w, lastHeartbeatAt: w.lastHeartbeatAt.toISOString() })),
      waiting: page,
      has_more: more,
      next_cursor: more ? encodeQueueCursor(start + page.length) : null,
      running: rows.active
        .filter((j) => j.status === 'running')
        .map((j) => ({ owner: names.get(j.ownerId) ?? j.ownerId, jobId: visibleId(j.ownerId, j.id), worker: j.workerId, currentStep: j.currentStep, totalSteps: j.totalSteps })),
      users: snapshot.users.map((u) => ({ owner: names.get(u.userId) ?? u.userId, active: u.active, maxRunning: u.maxRunning, decayedUsageSlotSeconds: Math.round(u.decayedUsage) })),
    };
  }

  async usageSummary(principal: Principal, query: UsageQuery): Promise<UsageView> {
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - WEEK_MS);
    if (from >= to) throw new ValidationFailed([{ field: 'query.from', message: 'must be before query.to' }]);
    const rows = await this.usage.summary(from, to, principal.role === 'admin' ? null : principal.userId);
    const byUser = new Map<string, { user: { id: string; name: string }; slotSeconds: number; byDevice: Record<string, number>; jobs: number; attempts: number }>();
    for (const row of rows) {
      const entry = byUser.get(row.userId) ?? { user: { id: row.userId, name: row.userName }, slotSeconds: 0, byDevice: {}, jobs: 0, attempts: 0 };
      entry.slotSeconds += row.slotSeconds;
      entry.byDevice[row.device] = row.slotSeconds;
      entry.jobs += row.jobs;
      entry.attempts += row.attempts;
      byUser.set(row.userId, entry);
    }
    const total = [...byUser.values()].reduce((n, e) => n + e.slotSeconds, 0);
    return { from: from.toISOString(), to: to.toISOString(), data: [...byUser.values()].map((e) => ({ ...e, share: total > 0 ? e.slotSeconds / total : 0 })) };
  }
}

/** Opaque cursor over the place in the queue's order (admitted jobs, then the plan). */
function encodeQueueCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ q: offset })).toString('base64url');
}

function decodeQueueCursor(cursor: string): number | null {
  try {
    const { q } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { q?: unknown };
    return Number.isSafeInteger(q) && (q as number) >= 0 ? (q as number) : null;
  } catch {
    return null;
  }
}

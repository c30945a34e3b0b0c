import { Inject, Injectable } from '@nestjs/common';
import type { QueueView, UsageQuery, UsageView } from '../contracts/lab.dto';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobRepository } from '../repositories/job.repository';
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
    private readonly jobs: JobRepository,
    private readonly usage: UsageRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async queue(principal: Principal): Promise<QueueView> {
    const { snapshot, placements } = await this.dispatch.explain();
    const active = await this.jobs.list({ ownerIds: null, status: 'running', limit: 1000 });
    const admitted = await this.jobs.list({ ownerIds: null, status: 'queued', limit: 1000 });
    const names = new Map([...active, ...admitted].map((j) => [j.ownerId, j.owner.name]));
    const pendingById = new Map(snapshot.pending.map((j) => [j.id, j]));
    const ownerNames = await this.jobs.ownerNames([...new Set(snapshot.pending.map((j) => j.ownerId))]);
    for (const [id, name] of ownerNames) names.set(id, name);
    // Other users' jobs appear by owner only: their ids are not disclosed to members.
    const visibleId = (ownerId: string, jobId: string) => (principal.role === 'admin' || ownerId === principal.userId ? jobId : null);
    return {
      capacity: { gpu: { slots: snapshot.capacity.slots.gpu, busy: snapshot.capacity.busy.gpu }, cpu: { slots: snapshot.capacity.slots.cpu, busy: snapshot.capacity.busy.cpu } },
      workers: snapshot.workers.map((w) => ({ ...w, lastHeartbeatAt: w.lastHeartbeatAt.toISOString() })),
      waiting: [
        ...admitted
          .filter((j) => j.dispatchedAt)
          .map((j) => ({ position: 0, owner: j.owner.name, jobId: visibleId(j.ownerId, j.id), device: j.dispatchedDevice ?? j.device, priority: j.priority, reason: 'admitted; a worker is starting it', admitted: true })),
        ...placements.map((p) => {
          const job = pendingById.get(p.jobId)!;
          return { position: p.position, owner: names.get(p.ownerId) ?? p.ownerId, jobId: visibleId(p.ownerId, p.jobId), device: job.device, priority: job.priority, reason: p.reason, admitted: false };
        }),
      ],
      running: active.map((j) => ({ owner: j.owner.name, jobId: visibleId(j.ownerId, j.id), worker: j.workerId, currentStep: j.currentStep, totalSteps: j.totalSteps })),
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

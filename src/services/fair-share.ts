/**
 * Admission order across a lab's users (docs/scheduling.md), as a pure function of the current
 * state so it can be tested on its own and used both to admit jobs and to explain waits.
 *
 * Across users, fair share: the next slot goes to the user with the fewest active jobs (running
 * or admitted), then the least decayed recent usage, then the oldest waiting job; so a user with
 * ten queued jobs does not starve a user with one. Within a user, higher priority first, then
 * older. Users at their running-jobs quota wait; so do jobs whose kind of worker is full or
 * absent. The resulting sequence is everyone's queue position.
 */
export type Device = 'gpu' | 'cpu';

export interface PendingJob {
  id: string;
  ownerId: string;
  priority: number;
  device: Device | 'any';
  createdAt: Date;
}

export interface UserShare {
  userId: string;
  /** Jobs running or admitted to the queue now. */
  active: number;
  maxRunning: number;
  /** Σ slot-seconds × 2^(−age / half-life). */
  decayedUsage: number;
}

export interface Capacity {
  slots: Record<Device, number>;
  busy: Record<Device, number>;
}

export interface Placement {
  jobId: string;
  ownerId: string;
  /** 1 = next. */
  position: number;
  /** Admit now to this kind of worker; null = keeps waiting (see reason). */
  admit: Device | null;
  reason: string;
}

const OPTIONS: Record<PendingJob['device'], Device[]> = { gpu: ['gpu'], cpu: ['cpu'], any: ['gpu', 'cpu'] };

export function planAdmission(pending: readonly PendingJob[], users: readonly UserShare[], capacity: Capacity): Placement[] {
  const share = new Map(users.map((u) => [u.userId, { ...u }]));
  const free: Record<Device, number> = { gpu: capacity.slots.gpu - capacity.busy.gpu, cpu: capacity.slots.cpu - capacity.busy.cpu };
  const queues = new Map<string, PendingJob[]>();
  for (const job of [...pending].sort((a, b) => b.priority - a.priority || a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))) {
    const list = queues.get(job.ownerId) ?? [];
    list.push(job);
    queues.set(job.ownerId, list);
    if (!share.has(job.ownerId)) share.set(job.ownerId, { userId: job.ownerId, active: 0, maxRunning: Infinity, decayedUsage: 0 });
  }
  const placements: Placement[] = [];
  const overQuota: Placement[] = [];
  while (queues.size > 0) {
    const [ownerId, list] = [...queues.entries()].sort(([a, qa], [b, qb]) => {
      const ua = share.get(a)!;
      const ub = share.get(b)!;
      return ua.active - ub.active || ua.decayedUsage - ub.decayedUsage || qa[0].createdAt.getTime() - qb[0].createdAt.getTime() || a.localeCompare(b);
    })[0];
    const user = share.get(ownerId)!;
    const job = list.shift()!;
    if (list.length === 0) queues.delete(ownerId);
    if (user.active >= user.maxRunning) {
      overQuota.push({ jobId: job.id, ownerId, position: 0, admit: null, reason: `the owner runs ${user.active} job(s), their quota is ${user.maxRunning}` });
      continue;
    }
    const options = OPTIONS[job.device];
    const online = options.filter((d) => capacity.slots[d] > 0);
    const open = online.find((d) => free[d] > 0) ?? null;
    // Counted as active either way: a job waiting for a slot is ahead of this user's next one.
    user.active++;
    if (open) free[open]--;
    const kind = job.device === 'any' ? 'worker' : `${job.device} worker`;
    const reason = open
      ? `admitted to a ${open} worker`
      : online.length === 0
        ? `no ${kind} is online`
        : `all ${online.map((d) => `${capacity.slots[d]} ${d}`).join(' and ')} slot(s) are busy`;
    placements.push({ jobId: job.id, ownerId, position: 0, admit: open, reason });
  }
  return [...placements, ...overQuota].map((p, i) => ({ ...p, position: i + 1 }));
}

/** Σ seconds × 2^(−age/halfLife) over usage intervals (age measured from each interval's end). */
export function decayedUsage(intervals: readonly { startedAt: Date; endedAt: Date | null }[], now: Date, halfLifeS: number): number {
  let total = 0;
  for (const { startedAt, endedAt } of intervals) {
    const end = endedAt ?? now;
    const seconds = Math.max(0, (end.getTime() - startedAt.getTime()) / 1000);
    const age = Math.max(0, (now.getTime() - end.getTime()) / 1000);
    total += seconds * 2 ** (-age / halfLifeS);
  }
  return total;
}

/** A worker that is heart-beating, with the slots it announces. */
export interface WorkerSlots {
  id: string;
  device: Device;
  slots: number;
  running: number;
  backend: string;
  lastHeartbeatAt: Date;
}

/** A job holding or about to hold a slot: running, or queued and already handed to a worker queue. */
export interface ActiveJob {
  ownerId: string;
  status: string;
  workerId: string | null;
  dispatchedDevice: Device | null;
}

/** What the scheduler reads, as stored: every input of one admission decision. */
export interface SchedulingState {
  now: Date;
  pending: PendingJob[];
  active: ActiveJob[];
  /** Only workers seen within the staleness window. */
  workers: WorkerSlots[];
  /** The owners of pending and active jobs, with their own running-jobs quota (null = the default). */
  owners: { id: string; maxRunningJobs: number | null }[];
  /** Their usage intervals that ended inside the usage horizon, or are still open. */
  usage: { userId: string; startedAt: Date; endedAt: Date | null }[];
}

/** What admission decides from: waiting jobs, each user's share and quota, free capacity. */
export interface SchedulingSnapshot {
  pending: PendingJob[];
  users: UserShare[];
  capacity: Capacity;
  workers: WorkerSlots[];
}

/** Usage older than ten half-lives weighs less than 2^−10 ≈ 0.1% of its slot-seconds: it is not read. */
export function usageHorizonMs(halfLifeS: number): number {
  return 10 * halfLifeS * 1000;
}

/**
 * Slots announced by live workers, and the ones held: a running job holds a slot on its
 * worker's device (none if that worker stopped heart-beating), an admitted job on the device it
 * was dispatched to.
 */
export function capacityOf(workers: readonly WorkerSlots[], active: readonly ActiveJob[]): Capacity {
  const deviceOf = new Map(workers.map((w) => [w.id, w.device]));
  const capacity: Capacity = { slots: { gpu: 0, cpu: 0 }, busy: { gpu: 0, cpu: 0 } };
  for (const w of workers) capacity.slots[w.device] += w.slots;
  for (const job of active) {
    const device = job.status === 'running' ? (job.workerId ? deviceOf.get(job.workerId) : undefined) : job.dispatchedDevice;
    if (device) capacity.busy[device]++;
  }
  return capacity;
}

/** The state reduced to what planAdmission weighs: each owner's active jobs, quota and decayed usage. */
export function schedulingSnapshot(state: SchedulingState, settings: { defaultMaxRunning: number; halfLifeS: number }): SchedulingSnapshot {
  const activeBy = new Map<string, number>();
  for (const job of state.active) activeBy.set(job.ownerId, (activeBy.get(job.ownerId) ?? 0) + 1);
  return {
    pending: state.pending,
    users: state.owners.map((u) => ({
      userId: u.id,
      active: activeBy.get(u.id) ?? 0,
      maxRunning: u.maxRunningJobs ?? settings.defaultMaxRunning,
      decayedUsage: decayedUsage(state.usage.filter((r) => r.userId === u.id), state.now, settings.halfLifeS),
    })),
    capacity: capacityOf(state.workers, state.active),
    workers: state.workers,
  };
}


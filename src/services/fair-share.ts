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
  const free: Record<Device, number> = { gpu: capacity.slots.gpu - capacity.busy.gpu, cpu: capacity.slots.cpu - capacity.busy.cpu };
  // One entry per user with waiting jobs: their share (copied: it grows as jobs are placed) and their jobs in order.
  const given = new Map(users.map((u) => [u.userId, u]));
  const turns = new Map<string, Turn>();
  const sorted = pending.map((job) => ({ job, at: job.createdAt.getTime() }));
  sorted.sort((a, b) => b.job.priority - a.job.priority || a.at - b.at || byCodePoint(a.job.id, b.job.id));
  for (const { job, at } of sorted) {
    let turn = turns.get(job.ownerId);
    if (!turn) {
      const user = given.get(job.ownerId);
      turn = { ownerId: job.ownerId, held: user?.active ?? 0, placed: 0, maxRunning: user?.maxRunning ?? Infinity, usage: user?.decayedUsage ?? 0, jobs: [], times: [], next: 0 };
      turns.set(job.ownerId, turn);
    }
    turn.jobs.push(job);
    turn.times.push(at);
  }
  // Whose turn it is: fewest active (held, and placed in this plan), least usage, oldest next
  // job. Only the chosen user's key changes in a round, so a heap of users keeps each round at
  // O(log users), not a sort.
  const active = (t: Turn) => t.held + t.placed;
  const heap = new Heap<Turn>((a, b) => (active(a) - active(b) || a.usage - b.usage || a.times[a.next] - b.times[b.next] || byCodePoint(a.ownerId, b.ownerId)) < 0);
  for (const turn of turns.values()) heap.push(turn);
  const reasons = new Map<string, string>();
  const placements: Placement[] = [];
  const overQuota: Placement[] = [];
  for (let turn = heap.pop(); turn !== undefined; turn = heap.pop()) {
    const job = turn.jobs[turn.next++];
    if (active(turn) >= turn.maxRunning) {
      overQuota.push({ jobId: job.id, ownerId: turn.ownerId, position: 0, admit: null, reason: quotaReason(turn) });
    } else {
      const options = OPTIONS[job.device];
      const online = options.filter((d) => capacity.slots[d] > 0);
      const open = online.find((d) => free[d] > 0) ?? null;
      // Counted as active either way: a job waiting for a slot is ahead of this user's next one.
      turn.placed++;
      if (open) free[open]--;
      placements.push({ jobId: job.id, ownerId: turn.ownerId, position: 0, admit: open, reason: reasonFor(reasons, job.device, open, online, capacity) });
    }
    if (turn.next < turn.jobs.length) heap.push(turn);
  }
  const plan = placements.concat(overQuota);
  for (let i = 0; i < plan.length; i++) plan[i].position = i + 1;
  return plan;
}

interface Turn {
  ownerId: string;
  /** Jobs running or admitted (starting) now. */
  held: number;
  /** Jobs of theirs placed before in this plan, admitted or waiting for a slot (they run before the next). */
  placed: number;
  maxRunning: number;
  usage: number;
  /** The user's waiting jobs in their order (priority, then age), their creation times, and the next to place. */
  jobs: PendingJob[];
  times: number[];
  next: number;
}

/** Why a user's next job waits for their quota, with the counts that fill it. */
function quotaReason(turn: Turn): string {
  const held = `the owner has ${turn.held} job(s) running or starting`;
  const placed = turn.placed > 0 ? ` and ${turn.placed} more placed before this one` : '';
  return `${held}${placed}; their quota of ${turn.maxRunning} is full`;
}

/** Why a job is admitted or waits; the same few sentences over and over, so built once each. */
function reasonFor(reasons: Map<string, string>, device: PendingJob['device'], open: Device | null, online: Device[], capacity: Capacity): string {
  const key = `${device}:${open}:${online.join()}`;
  let reason = reasons.get(key);
  if (reason === undefined) {
    const kind = device === 'any' ? 'worker' : `${device} worker`;
    reason = open
      ? `admitted to a ${open} worker`
      : online.length === 0
        ? `no ${kind} is online`
        : `all ${online.map((d) => `${capacity.slots[d]} ${d}`).join(' and ')} slot(s) are busy`;
    reasons.set(key, reason);
  }
  return reason;
}

/** Ties between ids (uuids) broken by code point: the same order as localeCompare for them, without its cost (ICU collation, microseconds a call). */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A binary min-heap under `less`. */
class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < items.length && this.less(items[left], items[least])) least = left;
        if (right < items.length && this.less(items[right], items[least])) least = right;
        if (least === i) break;
        [items[i], items[least]] = [items[least], items[i]];
        i = least;
      }
    }
    return top;
  }
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
  const usageBy = new Map<string, SchedulingState['usage']>();
  for (const record of state.usage) {
    const records = usageBy.get(record.userId) ?? [];
    records.push(record);
    usageBy.set(record.userId, records);
  }
  return {
    pending: state.pending,
    users: state.owners.map((u) => ({
      userId: u.id,
      active: activeBy.get(u.id) ?? 0,
      maxRunning: u.maxRunningJobs ?? settings.defaultMaxRunning,
      decayedUsage: decayedUsage(usageBy.get(u.id) ?? [], state.now, settings.halfLifeS),
    })),
    capacity: capacityOf(state.workers, state.active),
    workers: state.workers,
  };
}


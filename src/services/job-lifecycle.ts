import type { ControlRequest, JobStatus } from '../contracts/jobs.dto';

export { AttemptLost, type AttemptToken } from '../repositories/job-lifecycle.repository';

/**
 * The job lifecycle in one place (docs/failure-behaviour.md, "One lifecycle"): every status
 * change is one of these events, allowed only from the states it lists, and applied by
 * JobLifecycleRepository as a compare-and-set on the job's status (and, for what a running
 * attempt writes, on its fencing token: attempt number and worker). Pure: no I/O, no clock.
 *
 *   queued ──start──▶ running ──succeed──▶ succeeded
 *     │ ▲               │ │ └──fail──────▶ failed
 *     │ └──requeue──────┘ └───cancel─────▶ cancelled
 *     │ ▲   (preempt, shutdown, failed attempt, rollback, rescue, reclaim)
 *     │ └──resume── paused ◀──pause── running
 *     └──pauseWaiting──▶ paused, and queued/paused ──cancelWaiting──▶ cancelled
 */
export interface Transition {
  /** The states the event applies to; from any other it is refused. */
  readonly from: readonly JobStatus[];
  readonly to: JobStatus;
  /** Who causes it: the API for a user, the worker taking the job, the running attempt itself, or another process after the attempt's worker was lost. */
  readonly by: 'user' | 'worker' | 'attempt' | 'recovery';
}

export const TRANSITIONS = {
  /** A waiting job paused by its owner: it leaves the queue at once. */
  pauseWaiting: { from: ['queued'], to: 'paused', by: 'user' },
  /** A waiting or paused job cancelled by its owner: it ends at once. */
  cancelWaiting: { from: ['queued', 'paused'], to: 'cancelled', by: 'user' },
  resume: { from: ['paused'], to: 'queued', by: 'user' },
  /** Back to a checkpoint by hand, once training has stopped. */
  rollBack: { from: ['paused', 'failed', 'succeeded', 'cancelled'], to: 'queued', by: 'user' },
  /**
   * A worker begins an attempt. From `running`: the queue gave the job to this worker because
   * the previous attempt's worker lost it (dead, frozen, cut off past its lock); the new attempt
   * number fences the old one out.
   */
  start: { from: ['queued', 'running'], to: 'running', by: 'worker' },
  /** A job that cannot run at all (its stored spec no longer validates), refused before an attempt. */
  refuse: { from: ['queued', 'running'], to: 'failed', by: 'worker' },
  /** A worker could not store the start of its attempt: the job waits for another, the failed attempt counted. */
  skip: { from: ['queued', 'running'], to: 'queued', by: 'worker' },
  /** A cancel or pause that was pending when a worker took the job: obeyed before any training. */
  cancelUnstarted: { from: ['queued', 'running'], to: 'cancelled', by: 'worker' },
  pauseUnstarted: { from: ['queued', 'running'], to: 'paused', by: 'worker' },
  succeed: { from: ['running'], to: 'succeeded', by: 'attempt' },
  fail: { from: ['running'], to: 'failed', by: 'attempt' },
  cancel: { from: ['running'], to: 'cancelled', by: 'attempt' },
  pause: { from: ['running'], to: 'paused', by: 'attempt' },
  /** Preempted, the worker shutting down, a failed attempt with attempts left, a collapse rollback. */
  requeue: { from: ['running'], to: 'queued', by: 'attempt' },
  /** The attempt's worker stopped heart-beating: back to the queue (the scheduler). */
  rescue: { from: ['running'], to: 'queued', by: 'recovery' },
  /** A worker restarted under the same name: the attempts its earlier process held go back to the queue. */
  reclaim: { from: ['running'], to: 'queued', by: 'recovery' },
} as const satisfies Record<string, Transition>;

export type LifecycleEvent = keyof typeof TRANSITIONS;

/** A job in one of these has ended: nothing moves it again except a rollback by hand. */
export const ENDED: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export function hasEnded(status: JobStatus): boolean {
  return ENDED.includes(status);
}

export function allows(event: LifecycleEvent, status: JobStatus): boolean {
  return (TRANSITIONS[event].from as readonly JobStatus[]).includes(status);
}

/**
 * Requests to a running attempt, by rank: a request is never replaced by one of lower rank, so a
 * cancel is never overwritten by a pause or a preempt, and a pause not by a preempt.
 */
export const CONTROL_RANK: Record<ControlRequest, number> = { preempt: 1, pause: 2, cancel: 3 };

/** The requests `request` may replace (those it outranks). */
export function outranked(request: ControlRequest): ControlRequest[] {
  return (Object.keys(CONTROL_RANK) as ControlRequest[]).filter((other) => CONTROL_RANK[other] < CONTROL_RANK[request]);
}

/** The stronger of two requests (either may be absent). */
export function strongest(a: ControlRequest | null, b: ControlRequest | null): ControlRequest | null {
  if (a === null) return b;
  if (b === null) return a;
  return CONTROL_RANK[a] >= CONTROL_RANK[b] ? a : b;
}

/** What a control asked of a job in its current state does. */
export type ControlDecision =
  /** Takes effect now, as this event (a waiting job is paused or cancelled at once). */
  | { kind: 'apply'; event: 'pauseWaiting' | 'cancelWaiting' }
  /** Recorded on the job for its running attempt, which obeys within a poll (202). */
  | { kind: 'request' }
  /** The same request is already pending (202 again, nothing changes). */
  | { kind: 'pending' }
  /** Refused (409), and why, naming the job's state. */
  | { kind: 'refuse'; reason: string };

export function decideControl(job: { status: JobStatus; controlRequest: ControlRequest | null }, control: ControlRequest): ControlDecision {
  const { status, controlRequest: pending } = job;
  if (hasEnded(status)) return { kind: 'refuse', reason: `has already ended: it is ${status}` };
  if (status === 'running') {
    if (pending === control) return { kind: 'pending' };
    if (pending !== null && CONTROL_RANK[pending] > CONTROL_RANK[control]) return { kind: 'refuse', reason: `has a ${pending} pending, which a ${control} does not replace` };
    return { kind: 'request' };
  }
  if (control === 'cancel') return { kind: 'apply', event: 'cancelWaiting' };
  if (control === 'pause') return status === 'queued' ? { kind: 'apply', event: 'pauseWaiting' } : { kind: 'refuse', reason: 'is already paused' };
  return { kind: 'refuse', reason: `is ${status}; only running jobs can be preempted` };
}

/** Why a job cannot take `event`, naming its state; null when it can. */
export function refusal(event: LifecycleEvent, status: JobStatus): string | null {
  if (allows(event, status)) return null;
  if (hasEnded(status) && event !== 'rollBack') return `has already ended: it is ${status}`;
  return `is ${status}; only ${TRANSITIONS[event].from.join(', ')} jobs can be ${PAST[event] ?? event}`;
}

const PAST: Partial<Record<LifecycleEvent, string>> = { resume: 'resumed', rollBack: 'rolled back', pauseWaiting: 'paused', cancelWaiting: 'cancelled' };

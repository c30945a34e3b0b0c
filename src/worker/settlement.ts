import type { ControlRequest } from '../contracts/jobs.dto';
import type { AttemptEnd } from '../repositories/job-lifecycle.repository';
import { strongest, TRANSITIONS } from '../services/job-lifecycle';
import type { CollapseWarning } from '../training/signals/collapse';
import type { TrainingOutcome } from './training-runner';

/** Why the runner stopped a job's training before it ended on its own. */
export type StopReason = 'cancel' | 'pause' | 'preempt' | 'shutdown' | 'collapse-pause' | 'collapse-stop' | 'rollback';

/** How an attempt ended: its training's outcome, or the runner failing around it (a result not stored, the usage record, …). */
export type AttemptOutcome = TrainingOutcome | { status: 'runner-failed'; error: string };

/**
 * How an attempt ends, as data: the job's change with its event (JobLifecycleRepository.settle
 * stores it under the job's lock) and the webhook to send.
 */
export interface Settlement {
  end: AttemptEnd;
  notify?: Notification;
}

export interface Notification {
  event: 'job.succeeded' | 'job.failed' | 'job.cancelled' | 'job.paused';
  detail: Record<string, unknown>;
}

/** What an attempt's end depends on besides its outcome. */
export interface AttemptContext {
  trigger: CollapseWarning | null;
  /** Failed attempts before this one, and the most the job may have. */
  failedAttempts: number;
  maxFailedAttempts: number;
  /** A collapse rollback planned before the end: the checkpoint to go back to, and the job's new settings. */
  rollback?: PlannedRollback;
}

export interface PlannedRollback {
  toStep: number;
  data: AttemptEnd['data'];
  message: string;
  extra: Record<string, unknown>;
}

const finished = () => ({ finishedAt: new Date(), controlRequest: null });
const leftSlot = { controlRequest: null, dispatchedAt: null, dispatchedDevice: null, workerId: null };

/**
 * The job's final state from why training stopped, how it ended and the request pending on the
 * job when the end is stored. The strongest request wins: a cancel (asked at any time before the
 * end is stored) ends the job `cancelled`, whatever its training did; a pause pauses a job whose
 * training stopped; a preempt, or the worker shutting down, requeues it. Pure.
 */
export function settle(reason: StopReason | null, outcome: AttemptOutcome, context: AttemptContext, pending: ControlRequest | null): Settlement {
  const control = strongest(asControl(reason), pending);
  const cause = context.trigger ? `${context.trigger.detector} at step ${context.trigger.step}` : '';
  if (control === 'cancel') {
    return { end: { change: TRANSITIONS.cancel, data: finished(), record: { message: 'cancelled' } }, notify: { event: 'job.cancelled', detail: {} } };
  }
  if (outcome.status === 'completed') {
    return {
      end: { change: TRANSITIONS.succeed, data: { progress: 1, ...finished() }, record: { message: `succeeded at step ${outcome.step}` } },
      notify: { event: 'job.succeeded', detail: { step: outcome.step } },
    };
  }
  const stoppedCleanly = outcome.status === 'stopped' || outcome.status === 'write-failed' || outcome.status === 'runner-failed';
  const pausing = control === 'pause' || reason === 'collapse-pause';
  if (context.rollback && (reason === 'rollback' || pausing)) {
    // A pause asked meanwhile: rolled back all the same, and paused there instead of queued.
    const { toStep, data, message, extra } = context.rollback;
    const change = pausing ? TRANSITIONS.pause : TRANSITIONS.requeue;
    return { end: { change, data: { ...data, ...leftSlot }, record: { type: 'audit', message: pausing ? `${message}; paused there` : message, data: { ...extra, status: change.to } }, rollbackToStep: toStep } };
  }
  if (pausing && stoppedCleanly) {
    // A pause stands even when the last results could not be stored: it resumes from the last checkpoint.
    const step = 'step' in outcome ? outcome.step : null;
    const at = 'error' in outcome ? `(${outcome.error})` : step !== null && step < 0 ? 'during the warm-up' : `at step ${step}`;
    const why = reason === 'collapse-pause' ? ` by collapse rule (${cause})` : '';
    return {
      end: { change: TRANSITIONS.pause, data: leftSlot, record: { message: `paused ${at}${why}`, data: { status: 'paused', warning: context.trigger as object | null } } },
      notify: { event: 'job.paused', detail: { step, warning: context.trigger } },
    };
  }
  if (reason === 'collapse-stop' || reason === 'rollback') {
    const error = reason === 'rollback' ? `collapse (${cause}) and no rollback possible: no healthy checkpoint or rollbacks exhausted` : `stopped by collapse rule: ${cause}`;
    return failed(error, error, { warning: context.trigger });
  }
  if (outcome.status === 'write-failed' || outcome.status === 'runner-failed') return afterFailure(outcome.error, context);
  if (outcome.status === 'stopped') {
    // Preempted or the worker is shutting down: back to the queue, resumes from the checkpoint.
    const at = outcome.step < 0 ? 'during the warm-up' : `at step ${outcome.step}`;
    return { end: { change: TRANSITIONS.requeue, data: leftSlot, record: { message: `requeued ${at} (${reason ?? control})` } } };
  }
  return failed(outcome.status === 'failed' ? outcome.error : 'training process was killed');
}

/**
 * An attempt that failed for a reason the job may recover from on another attempt (a result
 * that could not be stored, the runner failing): back to the queue, resuming from the last
 * checkpoint, until the job has had `maxFailedAttempts` of them; then failed with the reason.
 */
function afterFailure(reason: string, context: Pick<AttemptContext, 'failedAttempts' | 'maxFailedAttempts'>): Settlement {
  const failedAttempts = context.failedAttempts + 1;
  const count = `failed attempt ${failedAttempts} of ${context.maxFailedAttempts}`;
  if (failedAttempts >= context.maxFailedAttempts) return failed(`${reason} (${count})`, undefined, {}, { failedAttempts });
  return { end: { change: TRANSITIONS.requeue, data: { failedAttempts, ...leftSlot }, record: { message: `requeued after ${count}: ${reason}`, data: { status: 'queued', failedAttempts, reason } } } };
}

function failed(error: string, message = `failed: ${error}`, extra: Record<string, unknown> = {}, data: AttemptEnd['data'] = {}): Settlement {
  return {
    end: { change: TRANSITIONS.fail, data: { error, ...data, ...finished() }, record: { message, data: { status: 'failed', ...extra } as object } },
    notify: { event: 'job.failed', detail: { error } },
  };
}

/** The request a stop reason carries out (collapse rules stop the job for their own reasons). */
function asControl(reason: StopReason | null): ControlRequest | null {
  return reason === 'cancel' || reason === 'pause' || reason === 'preempt' ? reason : null;
}

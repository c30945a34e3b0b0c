import type { JobRepository, JobRow } from '../repositories/job.repository';
import type { CollapseWarning } from '../training/signals/collapse';
import type { JobSpec } from '../training/spec/validate';
import type { TrainingOutcome } from './training-runner';

/** Why the runner stopped a job's training before it ended on its own. */
export type StopReason = 'cancel' | 'pause' | 'preempt' | 'shutdown' | 'collapse-pause' | 'collapse-stop' | 'rollback';

type JobChange = Parameters<JobRepository['transition']>[2];

/**
 * How an attempt ends, as data: the job's next state with its event, and the webhook to send.
 * The runner stores it (docs/failure-behaviour.md: retried, and in the background when the
 * database will not take it within the write deadline).
 */
export type Settlement =
  | { kind: 'transition'; from: JobRow['status'][]; data: JobChange; message: string; extra?: Record<string, unknown>; notify?: Notification }
  | { kind: 'rollback'; toStep: number; data: JobChange; message: string; extra: Record<string, unknown> };

export interface Notification {
  event: 'job.succeeded' | 'job.failed' | 'job.cancelled' | 'job.paused';
  detail: Record<string, unknown>;
}

/** What an attempt's end depends on besides its outcome. */
export interface AttemptContext {
  spec: JobSpec;
  trigger: CollapseWarning | null;
  /** Failed attempts before this one, and the most the job may have. */
  failedAttempts: number;
  maxFailedAttempts: number;
}

const finished = () => ({ finishedAt: new Date(), controlRequest: null });

export function cancelled(): Settlement {
  return { kind: 'transition', from: ['running', 'queued'], data: { status: 'cancelled', ...finished() }, message: 'cancelled', notify: { event: 'job.cancelled', detail: {} } };
}

/** A job that cannot run at all (its stored spec no longer validates): failed, not retried. */
export function unrunnable(error: string): Settlement {
  return { kind: 'transition', from: ['running', 'queued'], data: { status: 'failed', error, ...finished() }, message: `failed: ${error}`, notify: { event: 'job.failed', detail: { error } } };
}

/**
 * An attempt that failed for a reason the job may recover from on another attempt (a result
 * that could not be stored, the runner failing): back to the queue, resuming from the last
 * checkpoint, until the job has had `maxFailedAttempts` of them; then failed with the reason.
 */
export function afterFailure(reason: string, context: Pick<AttemptContext, 'failedAttempts' | 'maxFailedAttempts'>): Settlement {
  const failedAttempts = context.failedAttempts + 1;
  const count = `failed attempt ${failedAttempts} of ${context.maxFailedAttempts}`;
  if (failedAttempts >= context.maxFailedAttempts) {
    const error = `${reason} (${count})`;
    return { kind: 'transition', from: ['running'], data: { status: 'failed', error, failedAttempts, ...finished() }, message: `failed: ${error}`, notify: { event: 'job.failed', detail: { error } } };
  }
  return {
    kind: 'transition',
    from: ['running'],
    data: { status: 'queued', failedAttempts, controlRequest: null, dispatchedAt: null, workerId: null },
    message: `requeued after ${count}: ${reason}`,
    extra: { failedAttempts, reason },
  };
}

/** The final state from why training stopped and how it ended (a possible rollback is planned before). */
export function settle(reason: StopReason | null, outcome: TrainingOutcome, context: AttemptContext): Settlement {
  const cause = context.trigger ? `${context.trigger.detector} at step ${context.trigger.step}` : '';
  const transition = (data: JobChange, message: string, extra?: Record<string, unknown>, notify?: Notification): Settlement => ({ kind: 'transition', from: ['running', 'queued'], data, message, extra, notify });
  if (reason === 'cancel') return cancelled();
  if (outcome.status === 'completed') {
    return transition({ status: 'succeeded', progress: 1, ...finished() }, `succeeded at step ${outcome.step}`, undefined, { event: 'job.succeeded', detail: { step: outcome.step } });
  }
  const paused = reason === 'pause' || reason === 'collapse-pause';
  if (paused && (outcome.status === 'stopped' || outcome.status === 'write-failed')) {
    // A pause stands even when the last results could not be stored: it resumes from the last checkpoint.
    const step = 'step' in outcome ? outcome.step : null;
    const at = 'error' in outcome ? `(${outcome.error})` : `at step ${step}`;
    const why = reason === 'collapse-pause' ? ` by collapse rule (${cause})` : '';
    return transition({ status: 'paused', controlRequest: null, dispatchedAt: null }, `paused ${at}${why}`, { warning: context.trigger }, { event: 'job.paused', detail: { step, warning: context.trigger } });
  }
  if (reason === 'collapse-stop' || reason === 'rollback') {
    const error = reason === 'rollback' ? `collapse (${cause}) and no rollback possible: no healthy checkpoint or rollbacks exhausted` : `stopped by collapse rule: ${cause}`;
    return transition({ status: 'failed', error, ...finished() }, error, { warning: context.trigger }, { event: 'job.failed', detail: { error } });
  }
  if (outcome.status === 'write-failed') return afterFailure(outcome.error, context);
  if (outcome.status === 'stopped') {
    // Preempted or the worker is shutting down: back to the queue, resumes from the checkpoint.
    return transition({ status: 'queued', controlRequest: null, dispatchedAt: null, workerId: null }, `requeued at step ${outcome.step} (${reason})`);
  }
  const error = outcome.status === 'failed' ? outcome.error : 'training process was killed';
  return transition({ status: 'failed', error, ...finished() }, `failed: ${error}`, undefined, { event: 'job.failed', detail: { error } });
}

import type { ControlRequest } from '../contracts/jobs.dto';
import type { CollapseWarning } from '../training/signals/collapse';
import { AttemptContext, AttemptOutcome, settle, StopReason } from './settlement';

const warning: CollapseWarning = { step: 12, detector: 'grad_norm_spike', signal: 'grad_norm/actor', value: 9, threshold: 3, severity: 'critical', message: 'spike' };
const context = (over: Partial<AttemptContext> = {}): AttemptContext => ({ trigger: null, failedAttempts: 0, maxFailedAttempts: 3, ...over });
const completed: AttemptOutcome = { status: 'completed', step: 20 };
const stopped: AttemptOutcome = { status: 'stopped', step: 8 };

/** The parts of a settlement a scenario decides: the event's target state, its message, the webhook. */
function outcomeOf(reason: StopReason | null, outcome: AttemptOutcome, pending: ControlRequest | null, over: Partial<AttemptContext> = {}) {
  const { end, notify } = settle(reason, outcome, context(over), pending);
  return { to: end.change.to, from: end.change.from, message: end.record.message, notify: notify?.event ?? null, data: end.data, rollbackToStep: end.rollbackToStep };
}

/** How an attempt ends, scenario by scenario (src/services/job-lifecycle.ts has the states). */
describe('settle', () => {
  it('a run that completed succeeds', () => {
    expect(outcomeOf(null, completed, null)).toMatchObject({ to: 'succeeded', from: ['running'], message: 'succeeded at step 20', notify: 'job.succeeded', data: { progress: 1, controlRequest: null } });
  });

  it('a cancel pending when the end is stored wins over a completed run: cancelled, never succeeded', () => {
    expect(outcomeOf(null, completed, 'cancel')).toMatchObject({ to: 'cancelled', message: 'cancelled', notify: 'job.cancelled', data: { controlRequest: null } });
  });

  it('a pause or preempt pending on a completed run is moot: succeeded', () => {
    expect(outcomeOf(null, completed, 'pause').to).toBe('succeeded');
    expect(outcomeOf('preempt', completed, 'preempt').to).toBe('succeeded');
  });

  it('stopped for a pause: paused at its step, out of the slot', () => {
    expect(outcomeOf('pause', stopped, 'pause')).toMatchObject({ to: 'paused', message: 'paused at step 8', notify: 'job.paused', data: { workerId: null, dispatchedAt: null, controlRequest: null } });
  });

  it('stopped during the warm-up (no step 0 yet) for a pause: paused, saying where', () => {
    expect(outcomeOf('pause', { status: 'stopped', step: -1 }, 'pause').message).toBe('paused during the warm-up');
    expect(outcomeOf('preempt', { status: 'stopped', step: -1 }, 'preempt').message).toBe('requeued during the warm-up (preempt)');
  });

  it('stopped for a preempt with a cancel asked after it: cancelled, not requeued', () => {
    expect(outcomeOf('preempt', stopped, 'cancel')).toMatchObject({ to: 'cancelled', notify: 'job.cancelled' });
  });

  it('stopped for a preempt with a pause asked after it: paused (a pause outranks a preempt)', () => {
    expect(outcomeOf('preempt', stopped, 'pause').to).toBe('paused');
  });

  it('stopped for a preempt or the worker shutting down: requeued, saying why, no webhook', () => {
    expect(outcomeOf('preempt', stopped, 'preempt')).toMatchObject({ to: 'queued', message: 'requeued at step 8 (preempt)', notify: null, data: { workerId: null, dispatchedAt: null } });
    expect(outcomeOf('shutdown', stopped, null)).toMatchObject({ to: 'queued', message: 'requeued at step 8 (shutdown)' });
  });

  it('the worker shutting down with a pause pending: paused', () => {
    expect(outcomeOf('shutdown', stopped, 'pause').to).toBe('paused');
  });

  it('a result that could not be stored: requeued as failed attempt n+1, failed once attempts run out', () => {
    const writeFailed: AttemptOutcome = { status: 'write-failed', error: 'could not store step 3: down' };
    expect(outcomeOf(null, writeFailed, null, { failedAttempts: 1 })).toMatchObject({ to: 'queued', message: 'requeued after failed attempt 2 of 3: could not store step 3: down', data: { failedAttempts: 2 } });
    expect(outcomeOf(null, writeFailed, null, { failedAttempts: 2 })).toMatchObject({
      to: 'failed',
      message: 'failed: could not store step 3: down (failed attempt 3 of 3)',
      notify: 'job.failed',
      data: { failedAttempts: 3, error: 'could not store step 3: down (failed attempt 3 of 3)' },
    });
  });

  it('a result that could not be stored while a pause was asked: the pause stands', () => {
    expect(outcomeOf('pause', { status: 'write-failed', error: 'e' }, 'pause')).toMatchObject({ to: 'paused', message: 'paused (e)' });
  });

  it('the runner failing with a cancel pending: cancelled', () => {
    expect(outcomeOf(null, { status: 'runner-failed', error: 'e' }, 'cancel').to).toBe('cancelled');
  });

  it('a child that died or failed: failed with its error', () => {
    expect(outcomeOf(null, { status: 'killed' }, null)).toMatchObject({ to: 'failed', message: 'failed: training process was killed', data: { error: 'training process was killed' } });
    expect(outcomeOf(null, { status: 'failed', error: 'out of memory' }, null)).toMatchObject({ to: 'failed', message: 'failed: out of memory' });
  });

  it('a collapse rule that stops or pauses the job', () => {
    expect(outcomeOf('collapse-stop', { status: 'killed' }, null, { trigger: warning })).toMatchObject({ to: 'failed', message: 'stopped by collapse rule: grad_norm_spike at step 12' });
    expect(outcomeOf('collapse-pause', stopped, null, { trigger: warning })).toMatchObject({ to: 'paused', message: 'paused at step 8 by collapse rule (grad_norm_spike at step 12)' });
  });

  it('a collapse rollback: requeued with its new settings and its results after the target discarded; paused there when a pause was asked', () => {
    const rollback = { toStep: 10, data: { rollbacks: 1, currentStep: 10 }, message: 'rolled back to step 10', extra: { action: 'rollback', toStep: 10 } };
    expect(outcomeOf('rollback', { status: 'killed' }, null, { trigger: warning, rollback })).toMatchObject({ to: 'queued', message: 'rolled back to step 10', rollbackToStep: 10, data: { rollbacks: 1, currentStep: 10, workerId: null } });
    expect(outcomeOf('rollback', { status: 'killed' }, 'pause', { trigger: warning, rollback })).toMatchObject({ to: 'paused', message: 'rolled back to step 10; paused there', rollbackToStep: 10 });
    expect(outcomeOf('rollback', { status: 'killed' }, 'cancel', { trigger: warning, rollback }).to).toBe('cancelled');
  });

  it('a collapse rollback with nowhere to go back to: failed, saying why', () => {
    expect(outcomeOf('rollback', { status: 'killed' }, null, { trigger: warning })).toMatchObject({ to: 'failed', message: 'collapse (grad_norm_spike at step 12) and no rollback possible: no healthy checkpoint or rollbacks exhausted' });
  });
});

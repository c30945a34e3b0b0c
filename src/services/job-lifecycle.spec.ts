import { CONTROL_REQUESTS, ControlRequest, JOB_STATUSES, JobStatus } from '../contracts/jobs.dto';
import { allows, ControlDecision, decideControl, ENDED, outranked, refusal, strongest, TRANSITIONS } from './job-lifecycle';

describe('the job lifecycle table', () => {
  const events = Object.entries(TRANSITIONS);

  it('moves an ended job only by a rollback by hand', () => {
    const fromEnded = events.filter(([, t]) => t.from.some((s) => ENDED.includes(s))).map(([event]) => event);
    expect(fromEnded).toEqual(['rollBack']);
  });

  it('lets a running attempt move only a running job, and only out of running', () => {
    for (const [event, t] of events.filter(([, t]) => t.by === 'attempt' || t.by === 'recovery')) {
      expect([event, t.from]).toEqual([event, ['running']]);
      expect(t.to).not.toBe('running');
    }
  });

  it('starts an attempt from queued, or from running when the previous attempt lost the job; nothing else leads into running', () => {
    expect(events.filter(([, t]) => t.to === 'running').map(([event]) => event)).toEqual(['start']);
    expect(TRANSITIONS.start.from).toEqual(['queued', 'running']);
  });

  it('reaches every state, and leaves every state that has not ended', () => {
    for (const status of JOB_STATUSES) {
      expect([status, events.some(([, t]) => t.to === status)]).toEqual([status, true]);
      if (!ENDED.includes(status)) expect([status, events.some(([, t]) => (t.from as readonly JobStatus[]).includes(status) && t.to !== status)]).toEqual([status, true]);
    }
  });

  it.each([
    ['resume', 'paused', true],
    ['resume', 'running', false],
    ['cancelWaiting', 'paused', true],
    ['cancelWaiting', 'running', false],
    ['pauseWaiting', 'paused', false],
    ['rollBack', 'succeeded', true],
    ['rollBack', 'queued', false],
    ['succeed', 'queued', false],
    ['rescue', 'running', true],
  ] as const)('%s from %s: %s', (event, status, allowed) => {
    expect(allows(event, status)).toBe(allowed);
  });

  it('says why an event is refused, naming the state', () => {
    expect(refusal('resume', 'running')).toBe('is running; only paused jobs can be resumed');
    expect(refusal('resume', 'succeeded')).toBe('has already ended: it is succeeded');
    expect(refusal('rollBack', 'queued')).toBe('is queued; only paused, failed, succeeded, cancelled jobs can be rolled back');
    expect(refusal('resume', 'paused')).toBeNull();
  });
});

describe('control requests', () => {
  it('rank cancel over pause over preempt', () => {
    expect(outranked('cancel')).toEqual(['preempt', 'pause']);
    expect(outranked('pause')).toEqual(['preempt']);
    expect(outranked('preempt')).toEqual([]);
    expect(strongest('preempt', 'cancel')).toBe('cancel');
    expect(strongest('pause', 'preempt')).toBe('pause');
    expect(strongest(null, 'pause')).toBe('pause');
    expect(strongest(null, null)).toBeNull();
  });

  const apply = (event: 'pauseWaiting' | 'cancelWaiting'): ControlDecision => ({ kind: 'apply', event });
  const request: ControlDecision = { kind: 'request' };
  const pending: ControlDecision = { kind: 'pending' };
  const refuse = (reason: string): ControlDecision => ({ kind: 'refuse', reason });

  /** Every state (a running job with each request pending) × every control. */
  const table: [JobStatus, ControlRequest | null, ControlRequest, ControlDecision][] = [
    ['queued', null, 'cancel', apply('cancelWaiting')],
    ['queued', null, 'pause', apply('pauseWaiting')],
    ['queued', null, 'preempt', refuse('is queued; only running jobs can be preempted')],
    ['paused', null, 'cancel', apply('cancelWaiting')],
    ['paused', null, 'pause', refuse('is already paused')],
    ['paused', null, 'preempt', refuse('is paused; only running jobs can be preempted')],
    ['running', null, 'cancel', request],
    ['running', null, 'pause', request],
    ['running', null, 'preempt', request],
    ['running', 'cancel', 'cancel', pending],
    ['running', 'cancel', 'pause', refuse('has a cancel pending, which a pause does not replace')],
    ['running', 'cancel', 'preempt', refuse('has a cancel pending, which a preempt does not replace')],
    ['running', 'pause', 'cancel', request],
    ['running', 'pause', 'pause', pending],
    ['running', 'pause', 'preempt', refuse('has a pause pending, which a preempt does not replace')],
    ['running', 'preempt', 'cancel', request],
    ['running', 'preempt', 'pause', request],
    ['running', 'preempt', 'preempt', pending],
    ...(['succeeded', 'failed', 'cancelled'] as const).flatMap((status) => CONTROL_REQUESTS.map((control): [JobStatus, null, ControlRequest, ControlDecision] => [status, null, control, refuse(`has already ended: it is ${status}`)])),
  ];

  it.each(table)('%s with %s pending, asked to %s', (status, controlRequest, control, decision) => {
    expect(decideControl({ status, controlRequest }, control)).toEqual(decision);
  });

  it('covers every state and request in the table above', () => {
    const covered = new Set(table.map(([status, pendingRequest, control]) => `${status}/${pendingRequest}/${control}`));
    for (const status of JOB_STATUSES) for (const control of CONTROL_REQUESTS) expect(covered.has(`${status}/null/${control}`)).toBe(true);
    for (const pendingRequest of CONTROL_REQUESTS) for (const control of CONTROL_REQUESTS) expect(covered.has(`running/${pendingRequest}/${control}`)).toBe(true);
  });
});

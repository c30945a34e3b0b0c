import { TestStack, tinyJob } from '../support/stack';

const STEPS = 60;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Polls `condition` every 50 ms until it holds (an event: a process gone, a job moved). */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * docs/failure-behaviour.md, "A worker alive but cut off": a worker frozen (SIGSTOP) past its
 * queue lock while training loses the job to another worker; when it wakes up it is fenced out.
 * No step is stored twice or out of order, the job ends once, and the frozen attempt's training
 * child is gone.
 */
describe('a worker frozen past its lock (real processes, SIGSTOP)', () => {
  // Short lock (3 s, stall checks every second: test/support/stack.ts); a worker is stale after 20 s.
  const stack = new TestStack();

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('gives the job to another worker, fences the frozen attempt out when it wakes, and records every step exactly once', async () => {
    const frozen = stack.startWorker('frozen');
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: STEPS, checkpointEvery: 4, name: 'frozen-mid-run' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.worker === 'frozen' && j.currentStep >= 6, 60_000);
    const child = Number(/attempt 1 trains in process (\d+)/.exec(frozen.output)?.[1]);
    expect(exists(child)).toBe(true);
    // The taker is up and heart-beating before the freeze, so it takes the job as soon as the lock expires.
    const taker = stack.startWorker('taker');
    await until(async () => (await stack.request('GET', '/v1/queue')).body.workers.some((w: { id: string }) => w.id === 'taker'), 60_000, () => taker.output.slice(-3000));

    frozen.kill('SIGSTOP');
    let woken = false;
    try {
      const taken = await stack.waitForJob(job.id, (j) => j.worker === 'taker' && j.attempt === 2, 60_000);
      expect(taken.status).toBe('running');
      frozen.kill('SIGCONT');
      woken = true;
    } finally {
      if (!woken) frozen.kill('SIGCONT');
    }
    // Awake, the frozen attempt's next write (or control poll) finds the job taken: its child is killed.
    await until(() => !exists(child), 30_000, () => frozen.output.slice(-3000));
    await until(() => /attempt 1 lost the job to another attempt/.test(frozen.output), 30_000, () => frozen.output.slice(-3000));

    const done = await stack.waitForJob(job.id, (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), 120_000);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2, worker: 'taker', currentStep: STEPS });
    expect(frozen.alive).toBe(true); // it lost a job, not its life

    // Every step exactly once, in order: metrics, trajectories, and the step events after the takeover.
    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(range(0, STEPS));
    const trajectories = await stack.request('GET', `/v1/jobs/${job.id}/trajectories?from=1&to=${STEPS}&limit=1000`);
    expect(trajectories.body.data).toHaveLength(STEPS * 2 * 4);
    const events: { type: string; message: string; data: { step?: number; status?: string } | null }[] = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data;
    const takeover = events.findIndex((e) => /^running on taker \(attempt 2, resuming from step \d+\)$/.test(e.message));
    expect(takeover).toBeGreaterThan(0);
    const resumedFrom = Number(/from step (\d+)/.exec(events[takeover].message)![1]);
    const after = events.slice(takeover + 1);
    expect(after.filter((e) => e.type === 'step').map((e) => e.data!.step)).toEqual(range(resumedFrom + 1, STEPS));
    // The job ended once.
    expect(events.filter((e) => e.type === 'state' && ['succeeded', 'failed', 'cancelled'].includes(e.data?.status ?? '')).map((e) => e.message)).toEqual([`succeeded at step ${STEPS}`]);

    // Usage: the frozen attempt's slot time ended when it was last heard from, before the takeover.
    const usage = await stack.prisma.usageRecord.findMany({ where: { jobId: job.id }, orderBy: { attempt: 'asc' } });
    expect(usage.map((u) => [u.attempt, u.workerId, u.endedAt !== null])).toEqual([[1, 'frozen', true], [2, 'taker', true]]);
    expect(usage[0].endedAt!.getTime()).toBeLessThanOrEqual(usage[1].startedAt.getTime());
  }, 240_000);
});

import { TestStack, tinyJob } from '../support/stack';

/** docs/failure-behaviour.md: a worker killed mid-job; the job resumes from its last checkpoint elsewhere. */
describe('worker failure (real processes)', () => {
  const stack = new TestStack();

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('resumes a job from its last checkpoint on another worker after SIGKILL, with every step exactly once', async () => {
    const doomed = stack.startWorker('doomed');
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 30, checkpointEvery: 4, dModel: 32, groups: 4, name: 'crash-me' }) });
    // Kill once a checkpoint exists and the job has run past it, so there is work to lose.
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 6, 60_000);
    doomed.kill('SIGKILL');
    await doomed.exited;
    const killedAt = (await stack.request('GET', `/v1/jobs/${job.id}`)).body.currentStep;
    const checkpointsAtKill = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data.map((c: { step: number }) => c.step);
    const resumeStep = Math.max(...checkpointsAtKill);
    expect(resumeStep).toBeGreaterThanOrEqual(4);
    expect(resumeStep).toBeLessThanOrEqual(killedAt);

    const rescuer = stack.startWorker('rescuer');
    const done = await stack.waitForJob(job.id, (j) => ['succeeded', 'failed'].includes(j.status), 90_000);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2, worker: 'rescuer', currentStep: 30 });

    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(Array.from({ length: 31 }, (_, i) => i));
    const trajectories = await stack.request('GET', `/v1/jobs/${job.id}/trajectories?from=1&to=30&limit=1000`);
    expect(trajectories.body.data).toHaveLength(30 * 4 * 4);
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    expect(events).toContain(`running on rescuer (attempt 2, resuming from step ${resumeStep})`);
    // Leave no worker behind: the next test needs its job on the worker it stops.
    rescuer.kill('SIGTERM');
    expect(await rescuer.exited).toBe(0);
  }, 180_000);

  it('checkpoints, requeues and exits on SIGTERM; the job finishes on the next worker', async () => {
    const leaving = stack.startWorker('leaving');
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 120, checkpointEvery: 0, name: 'drain-me' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 3, 60_000);
    leaving.kill('SIGTERM');
    expect(await leaving.exited).toBe(0);
    const requeued = (await stack.request('GET', `/v1/jobs/${job.id}`)).body;
    expect(requeued.status).toBe('queued');
    const checkpoints = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data.map((c: { step: number }) => c.step);
    expect(checkpoints).toContain(requeued.currentStep);

    stack.startWorker('next');
    const done = await stack.waitForJob(job.id, (j) => ['succeeded', 'failed'].includes(j.status), 120_000);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2, worker: 'next' });
    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(Array.from({ length: 121 }, (_, i) => i));
  }, 180_000);
});

/** docs/scheduling.md, usage: only slot time held counts, whatever ends an attempt. */
describe('usage after a worker dies (real processes)', () => {
  // A worker not heard from for 2 s is gone: the scheduler requeues its jobs.
  const stack = new TestStack({ apiEnv: { STARLAB_WORKER_STALE_MS: '2000' } });

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  const usage = async () => {
    const { body } = await stack.request('GET', '/v1/usage');
    return { to: Date.parse(body.to), seconds: body.data.map((u: { user: { name: string }; slotSeconds: number }) => [u.user.name, u.slotSeconds]) };
  };

  it('closes a killed attempt at its last heartbeat; the requeued job, paused, adds nothing as time passes', async () => {
    const doomed = stack.startWorker('doomed-usage');
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 400, checkpointEvery: 4, name: 'killed-then-paused' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 3, 60_000);
    doomed.kill('SIGKILL');
    await doomed.exited;
    const requeued = await stack.waitForJob(job.id, (j) => j.status === 'queued', 30_000);
    expect(requeued).toMatchObject({ worker: null, attempt: 1 });
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    expect(events).toContain('requeued: worker doomed-usage stopped answering');
    const paused = await stack.request('POST', `/v1/jobs/${job.id}/pause`);
    expect([paused.status, paused.body.status]).toEqual([200, 'paused']);

    // The attempt's record ended when its worker was last heard from.
    const [record] = await stack.prisma.usageRecord.findMany({ where: { jobId: job.id } });
    const heard = await stack.prisma.worker.findUniqueOrThrow({ where: { id: 'doomed-usage' } });
    expect(record.endedAt).toEqual(heard.lastHeartbeatAt);
    const before = await usage();
    expect(before.seconds).toEqual([['admin', (record.endedAt!.getTime() - record.startedAt.getTime()) / 1000]]);
    // Time passes (the API's own clock moves on by 2 s): nothing more is counted.
    let after = await usage();
    while (after.to < before.to + 2000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await usage();
    }
    expect(after.seconds).toEqual(before.seconds);
  }, 120_000);
});

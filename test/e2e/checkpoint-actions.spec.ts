import { TestStack, tinyJob } from '../support/stack';

/** A finished job's checkpoints, used: evaluated on another config, forked, rolled back (real HTTP, worker process). */
describe('checkpoint actions (real HTTP, Postgres, worker process)', () => {
  const stack = new TestStack();
  let job: any;
  let checkpoints: { id: string; step: number; health: string }[];

  beforeAll(async () => {
    await stack.start();
    stack.startWorker('worker-a');
    const submitted = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 4, checkpointEvery: 2, name: 'source' }) });
    job = await stack.waitForJob(submitted.body.id, (j) => ['succeeded', 'failed'].includes(j.status), 90_000);
    checkpoints = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data;
  }, 120_000);
  afterAll(() => stack.stop(), 30_000);

  const metricsOf = async (id: string) => (await stack.request('GET', `/v1/jobs/${id}/metrics`)).body.data as { step: number; metrics: Record<string, number> }[];
  const withoutTimings = (metrics: Record<string, number>) => Object.fromEntries(Object.entries(metrics).filter(([name]) => !name.startsWith('perf/') && !name.endsWith('/ms')));

  it('evaluates a checkpoint on the bandit’s unseen arm names on a worker: 202, then success and pass@k to poll', async () => {
    expect(job.status).toBe('succeeded');
    expect(checkpoints.map((c) => c.step)).toEqual([0, 2, 4]);
    const created = await stack.request('POST', `/v1/jobs/${job.id}/evaluations`, { body: { environment: { config: { variant: 'alt' } }, episodes: 8, k: 3, temperature: 1 } });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', step: 4, checkpointId: checkpoints[2].id, episodes: 8, k: 3, temperature: 1, environment: { id: 'bandit', config: { variant: 'alt', lowReward: 0.1 } }, success: null });
    expect(created.headers.get('location')).toBe(`/v1/jobs/${job.id}/evaluations/${created.body.id}`);
    let evaluation = created.body;
    const deadline = Date.now() + 60_000;
    while (['queued', 'running'].includes(evaluation.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      evaluation = (await stack.request('GET', created.headers.get('location')!)).body;
    }
    expect(evaluation).toMatchObject({ status: 'succeeded', worker: 'worker-a', error: null });
    expect(evaluation.success).toBeGreaterThanOrEqual(0);
    expect(evaluation.passAtK).toBeGreaterThanOrEqual(evaluation.success);
    expect(evaluation.passAtK).toBeLessThanOrEqual(Math.min(1, 3 * evaluation.success) + 1e-12);
    expect(evaluation.samples[0]).toMatch(/^--- turn 1 ---\nArms : (turtle|eagle|snail|falcon|sloth|cheetah) /);
    const list = await stack.request('GET', `/v1/jobs/${job.id}/evaluations`);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([evaluation.id]);
  }, 90_000);

  it('refuses, with the reason, a config the checkpoint cannot read, and names unknown checkpoints', async () => {
    const sokoban = await stack.request('POST', `/v1/jobs/${job.id}/evaluations`, { body: { environment: { id: 'sokoban' } } });
    expect(sokoban.status).toBe(400);
    // 6·6 cells + 5 newlines + <bos> <obs> <left> 1 <resp> = 46 > 40 − 12.
    expect(sokoban.body.errors).toEqual([
      { field: 'body.environment.id', message: expect.stringMatching(/^the checkpoint's vocabulary has no .*"#".*cannot read sokoban observations/) },
      { field: 'body.environment.config', message: "one sokoban observation of this config takes 46 tokens with its markers; the checkpoint's context of 40 holds 28 beside a 12-token response" },
    ]);
    const tooMany = await stack.request('POST', `/v1/jobs/${job.id}/evaluations`, { body: { episodes: 1024, k: 16 } });
    expect(tooMany.body.errors).toEqual([{ field: 'body.k', message: 'episodes × k must be <= 4096 (1024 × 16)' }]);
    const missing = await stack.request('POST', `/v1/jobs/${job.id}/evaluations`, { body: { checkpointId: '00000000-0000-4000-8000-000000000000' } });
    expect(missing.status).toBe(404);
  });

  it('forks from the step-2 checkpoint with a lower learning rate and more steps; it trains steps 3…6 only', async () => {
    const forked = await stack.request('POST', `/v1/jobs/${job.id}/fork`, { body: { checkpointId: checkpoints[1].id, overrides: { training: { learningRate: 0.0005, steps: 6 } } } });
    expect(forked.status).toBe(201);
    expect(forked.body).toMatchObject({ status: 'queued', name: 'source-fork-2', currentStep: 2, totalSteps: 6, forkedFrom: { jobId: job.id, step: 2 }, spec: { training: { learningRate: 0.0005, steps: 6 } } });
    expect(forked.headers.get('location')).toBe(`/v1/jobs/${forked.body.id}`);
    const done = await stack.waitForJob(forked.body.id, (j) => ['succeeded', 'failed'].includes(j.status), 90_000);
    expect(done).toMatchObject({ status: 'succeeded', currentStep: 6 });
    expect((await metricsOf(done.id)).map((m) => m.step)).toEqual([3, 4, 5, 6]);
    const events = (await stack.request('GET', `/v1/jobs/${done.id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    expect(events).toContain(`queued: forked by admin from job ${job.id} at step 2`);
    expect(events).toContain('running on worker-a (attempt 1, resuming from step 2)');
  }, 120_000);

  it('refuses fork overrides that would change the model, naming the field', async () => {
    const reshaped = await stack.request('POST', `/v1/jobs/${job.id}/fork`, { body: { overrides: { model: { config: { dModel: 32 } }, training: { steps: 8 } } } });
    expect(reshaped.status).toBe(400);
    expect(reshaped.body.errors).toEqual([{ field: 'body.overrides.model.config.dModel', message: "would change the model's shape: the checkpoint has dModel 16" }]);
    const noSteps = await stack.request('POST', `/v1/jobs/${job.id}/fork`, { body: {} });
    expect(noSteps.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.overrides.training.steps']);
  });

  it('rolls a finished job back to its step-2 checkpoint by hand and retrains steps 3 and 4 exactly as before', async () => {
    const before = await metricsOf(job.id);
    // Back to where it stands (it succeeded at step 4, its last checkpoint) would queue it to train nothing.
    const inPlace = await stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: { checkpointId: checkpoints[2].id } });
    expect([inPlace.status, inPlace.body.detail]).toEqual([409, `job ${job.id} already stands on the checkpoint at step 4; fork it to train on with other settings`]);
    expect((await stack.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({ status: 'succeeded', attempt: 1 });
    // Two at once: one wins, the other finds the job no longer stopped.
    const race = await Promise.all([1, 2].map(() => stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: { checkpointId: checkpoints[1].id } })));
    expect(race.map((r) => r.status).sort()).toEqual([200, 409]);
    const rolledBack = race.find((r) => r.status === 200)!;
    const lost = race.find((r) => r.status === 409)!;
    expect(rolledBack.body).toMatchObject({ status: 'queued', currentStep: 2, finishedAt: null, error: null });
    expect(lost.body.detail).toMatch(/(is (queued|running); only paused, failed, succeeded, cancelled jobs can be rolled back: pause it first|changed state meanwhile)/);
    const again = await stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: {} });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/is (queued|running); only paused, failed, succeeded, cancelled jobs can be rolled back: pause it first/);
    const done = await stack.waitForJob(job.id, (j) => j.status === 'succeeded' && j.attempt === 2, 90_000);
    expect(done.currentStep).toBe(4);
    const after = await metricsOf(job.id);
    expect(after.map((m) => m.step)).toEqual([0, 1, 2, 3, 4]);
    // The checkpoint holds every RNG state: the retrained steps are the first run's.
    for (const step of [3, 4]) expect(withoutTimings(after[step].metrics)).toEqual(withoutTimings(before[step].metrics));
    const audit = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.filter((e: { type: string }) => e.type === 'audit');
    expect(audit.map((e: { message: string }) => e.message).filter((m: string) => m.startsWith('rolled back by admin'))).toEqual([`rolled back by admin to the ${checkpoints[1].health} checkpoint at step 2`]);
  }, 120_000);
});

import { baselines, expertSuccess } from '../../src/training/experiment/baselines';
import { specDigest } from '../../src/training/experiment/digest';
import { parseJobSpec } from '../../src/training/spec/validate';
import { TestStack, tinyJob } from '../support/stack';

/** A small FrozenLake job: a demonstrations warm-up of 3 steps and 2 RL steps on a tiny model. */
const FROZENLAKE = {
  environment: { id: 'frozenlake', config: { slippery: false } },
  algorithm: { id: 'starpo-s' },
  model: { config: { layers: 1, dModel: 16, heads: 2 } },
  rollout: { groups: 2, groupSize: 4 },
  training: { steps: 2, evalEvery: 0, evalEpisodes: 8, checkpointEvery: 0, warmup: { kind: 'demonstrations', steps: 3, batchSize: 8 } },
};

/** Experiments through the real API and a real worker: one unit of jobs, its table, its controls, its archive. */
describe('experiments (real HTTP, worker)', () => {
  const stack = new TestStack();

  beforeAll(async () => {
    await stack.start();
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  const poll = async (id: string, done: (e: any) => boolean, timeoutMs = 240_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await stack.request('GET', `/v1/experiments/${id}`);
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`experiment ${id} did not get there: ${JSON.stringify({ status: body.status, references: body.references, progress: body.progress })}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('refuses a grid with a bad run whole, naming the path and the run; nothing is queued', async () => {
    const response = await stack.request('POST', '/v1/experiments', { body: { name: 'bad', base: FROZENLAKE, grid: { 'algorithm.id': ['starpo-s', 'no-such-preset'], 'training.seed': [1, 2] } } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body.errors[0]).toEqual({ field: 'grid.algorithm.id', message: expect.stringContaining('in run 3 (algorithm.id=no-such-preset, training.seed=1)') });
    const bad = await stack.request('POST', '/v1/experiments', { body: { name: 'bad', base: FROZENLAKE, grid: { 'training.seeds': [1] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('grid.training.seeds');
    expect((await stack.request('GET', '/v1/jobs')).body.data).toEqual([]);
  });

  it('refuses a grid over the queued-jobs quota whole, with the count', async () => {
    const me = (await stack.request('GET', '/v1/users/me')).body;
    await stack.prisma.user.update({ where: { id: me.id }, data: { maxQueuedJobs: 5 } });
    await stack.request('POST', '/v1/jobs', { body: tinyJob({ name: 'already-queued' }) });
    const response = await stack.request('POST', '/v1/experiments', { body: { name: 'too-big', base: FROZENLAKE, grid: { 'training.seed': [1, 2, 3, 4, 5] } } });
    expect(response.status).toBe(429);
    expect(response.body).toMatchObject({ title: 'Quota exceeded', jobs: 5, queued: 1, quota: 5 });
    expect(response.body.detail).toMatch(/this experiment has 5 jobs; you have 1 queued and your quota is 5, so at most 4 more fit/);
    expect((await stack.request('GET', '/v1/jobs')).body.data.map((j: any) => j.name)).toEqual(['already-queued']);
    // Two experiments racing for the last 4 places: the owner's lock counts one after the other, so one fits and one is refused whole.
    const race = await Promise.all(['a', 'b'].map((name) => stack.request('POST', '/v1/experiments', { body: { name, base: FROZENLAKE, grid: { 'training.seed': [1, 2, 3] } } })));
    expect(race.map((r) => r.status).sort()).toEqual([201, 429]);
    expect((await stack.request('GET', '/v1/jobs?status=queued&limit=100')).body.data).toHaveLength(4);
    const raced = race.find((r) => r.status === 201)!.body.id;
    await stack.request('POST', `/v1/experiments/${raced}/cancel`);
    expect((await stack.request('DELETE', `/v1/experiments/${raced}`)).status).toBe(200);
    await stack.prisma.user.update({ where: { id: me.id }, data: { maxQueuedJobs: null } });
    // A queued job cannot be archived; cancelled, it can.
    const queued = (await stack.request('GET', '/v1/jobs?q=already-queued')).body.data[0].id;
    expect((await stack.request('DELETE', `/v1/jobs/${queued}`)).status).toBe(409);
    await stack.request('POST', `/v1/jobs/${queued}/cancel`);
    expect((await stack.request('DELETE', `/v1/jobs/${queued}`)).body.archivedAt).not.toBeNull();
  });

  it('runs 2 presets × 2 seeds to a table of their own jobs, beside the random agent and the optimum on the same seeds', async () => {
    const grid = { 'algorithm.id': ['starpo-grpo', 'starpo-s'], 'training.seed': [1, 2] };
    const submitted = await stack.request('POST', '/v1/experiments', { body: { name: 'fl', base: FROZENLAKE, grid }, headers: { 'Idempotency-Key': 'fl-1' } });
    expect(submitted.status).toBe(201);
    const experiment = submitted.body;
    expect(experiment.cells.map((c: any) => [c.label, c.seeds, c.runs.length])).toEqual([
      ['algorithm.id=starpo-grpo', [1, 2], 2],
      ['algorithm.id=starpo-s', [1, 2], 2],
    ]);
    // Each run is the base with its point set: the same digest as that job submitted on its own.
    const run = experiment.cells[1].runs[1];
    expect(run.digest).toBe(specDigest({ ...FROZENLAKE, algorithm: { id: 'starpo-s' }, training: { ...FROZENLAKE.training, seed: 2 } }));
    expect(run.name).toBe('fl-c2-s2');
    // A retry with the same key is the same experiment; no job is added.
    const replay = await stack.request('POST', '/v1/experiments', { body: { name: 'fl', base: FROZENLAKE, grid }, headers: { 'Idempotency-Key': 'fl-1' } });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.id]).toEqual([200, 'true', experiment.id]);
    expect((await stack.request('GET', `/v1/jobs?experiment=${experiment.id}`)).body.data).toHaveLength(4);

    stack.startWorker('exp-worker', { STARLAB_WORKER_SLOTS: '2' });
    const done = await poll(experiment.id, (e) => e.status === 'succeeded' && e.references === 'ready');
    expect(done.progress).toMatchObject({ jobs: 4, byStatus: { succeeded: 4 }, fraction: 1 });
    const spec = parseJobSpec({ ...FROZENLAKE, algorithm: { id: 'starpo-s' } });
    const { random, optimal } = await baselines(spec);
    for (const cell of done.cells) {
      // Each seed's numbers are its job's own evaluations at step 0 and at step 2.
      const seeds = await Promise.all(
        cell.runs.map(async (r: any) => {
          const rows = (await stack.request('GET', `/v1/jobs/${r.jobId}/metrics?names=eval/sampled/success`)).body.data;
          const at = (step: number) => rows.find((row: any) => row.step === step).metrics['eval/sampled/success'];
          expect([r.afterWarmup, r.afterRl]).toEqual([at(0), at(2)]);
          return [at(0), at(2)];
        }),
      );
      const [[w1, r1], [w2, r2]] = seeds;
      expect(cell.finished).toBe(2);
      expect(cell.afterWarmup).toEqual({ mean: (w1 + w2) / 2, min: Math.min(w1, w2), max: Math.max(w1, w2) });
      expect(cell.afterRl).toEqual({ mean: (r1 + r2) / 2, min: Math.min(r1, r2), max: Math.max(r1, r2) });
      expect(cell.table).toMatch(/^\d+\.\d → \d+\.\d \(\d+\.\d–\d+\.\d, 2 seeds\)$/);
      // The references are computed on the cell's own evaluation seeds and budgets.
      expect([cell.random, cell.optimal, cell.expert]).toEqual([random, optimal, await expertSuccess(spec)]);
    }
    expect(optimal).toBe(1); // non-slippery: every map is solvable within the budget

    // The curves: one band per cell, steps 0 and 2, over both seeds.
    const curves = (await stack.request('GET', `/v1/experiments/${experiment.id}/curves`)).body;
    expect(curves.metric).toBe('eval/sampled/success');
    expect(curves.cells[0].points.map((p: any) => [p.step, p.n])).toEqual([[0, 2], [2, 2]]);
    expect(curves.cells[0].points[1]).toMatchObject({ mean: done.cells[0].afterRl.mean, min: done.cells[0].afterRl.min, max: done.cells[0].afterRl.max });

    // The list shows it; archived, it moves to ?archived=true with its jobs, results kept.
    expect((await stack.request('GET', '/v1/experiments')).body.data.map((e: any) => [e.id, e.status, e.jobs])).toEqual([[experiment.id, 'succeeded', 4]]);
    const archived = await stack.request('DELETE', `/v1/experiments/${experiment.id}`);
    expect([archived.status, archived.body.archivedAt !== null]).toEqual([200, true]);
    expect((await stack.request('GET', '/v1/experiments')).body.data).toEqual([]);
    expect((await stack.request('GET', '/v1/experiments?archived=true')).body.data.map((e: any) => e.id)).toContain(experiment.id);
    expect((await stack.request('GET', `/v1/jobs?experiment=${experiment.id}`)).body.data).toEqual([]);
    expect((await stack.request('GET', `/v1/jobs?experiment=${experiment.id}&archived=true`)).body.data).toHaveLength(4);
    expect((await stack.request('GET', `/v1/experiments/${experiment.id}`)).body.cells[1].afterRl).toEqual(done.cells[1].afterRl);
    // Purged: results gone, the records stay.
    const purged = await stack.request('DELETE', `/v1/experiments/${experiment.id}?purge=true`);
    expect(purged.status).toBe(200);
    const after = (await stack.request('GET', `/v1/experiments/${experiment.id}`)).body;
    expect([after.purgedAt !== null, after.cells[0].afterRl, after.cells[0].runs[0].afterWarmup]).toEqual([true, null, null]);
    expect((await stack.request('GET', `/v1/jobs/${run.jobId}/checkpoints`)).body.data).toEqual([]);
    expect((await stack.request('GET', `/v1/jobs/${run.jobId}`)).body.purgedAt).not.toBeNull();
  }, 300_000);

  it('pauses, resumes and cancels all of its jobs, and refuses to archive it while any has not ended', async () => {
    const experiment = (await stack.request('POST', '/v1/experiments', { body: { name: 'long', base: tinyJob({ steps: 5000, checkpointEvery: 100 }), grid: { 'training.seed': [1, 2, 3] } } })).body;
    const ids = experiment.cells[0].runs.map((r: any) => r.jobId);
    // Seeds 1 and 2 run first (the worker has two slots; jobs start in grid order); seed 3 waits.
    await poll(experiment.id, (e) => e.cells[0].runs[0].status === 'running' && e.cells[0].runs[0].currentStep >= 1 && e.cells[0].runs[1].status === 'running', 120_000);
    expect((await stack.request('GET', `/v1/jobs/${ids[2]}`)).body.status).toBe('queued');
    expect((await stack.request('DELETE', `/v1/experiments/${experiment.id}`)).status).toBe(409);
    const paused = (await stack.request('POST', `/v1/experiments/${experiment.id}/pause`)).body;
    // The two running jobs take the request at their next poll (202 each); the waiting one is paused at once.
    expect(paused.jobs.map((j: any) => j.outcome)).toEqual(['requested', 'requested', 'done']);
    for (const id of ids) await stack.waitForJob(id, (j) => j.status === 'paused', 60_000);
    expect((await stack.request('GET', `/v1/experiments/${experiment.id}`)).body.status).toBe('paused');
    const resumed = (await stack.request('POST', `/v1/experiments/${experiment.id}/resume`)).body;
    expect(resumed.jobs.map((j: any) => j.outcome)).toEqual(['done', 'done', 'done']);
    const cancelled = (await stack.request('POST', `/v1/experiments/${experiment.id}/cancel`)).body;
    expect(cancelled.jobs.every((j: any) => j.outcome === 'done' || j.outcome === 'requested')).toBe(true);
    for (const id of ids) await stack.waitForJob(id, (j) => j.status === 'cancelled', 60_000);
    // Nothing left to cancel: every job is listed as skipped, with why.
    const again = (await stack.request('POST', `/v1/experiments/${experiment.id}/cancel`)).body;
    expect(again.jobs.map((j: any) => j.outcome)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(again.jobs[0].detail).toMatch(/cancelled/);
    expect((await stack.request('DELETE', `/v1/experiments/${experiment.id}`)).status).toBe(200);
  }, 240_000);
});

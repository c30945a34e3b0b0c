import { connectServedEnvironment } from '../../src/repositories/env-servers';
import { hasEnded } from '../../src/services/job-lifecycle';
import { references } from '../../src/training/experiment/baselines';
import { parseJobSpec } from '../../src/training/spec/validate';
import { EnvServer, startEnvServer } from '../support/env-servers/start';
import { TestStack } from '../support/stack';

/** A small job on environment `id`: a tiny model, a few steps, the served defaults otherwise. */
function servedJob(id: string, extra: Record<string, unknown> = {}) {
  return {
    name: `on-${id}`,
    environment: { id },
    algorithm: { id: 'starpo-s' },
    model: { config: { layers: 1, dModel: 16 } },
    rollout: { groups: 2, groupSize: 4, maxTokensPerTurn: 12 },
    training: { steps: 3, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 1, trajectoryTextSample: 1, warmup: { kind: 'format', steps: 2, batchSize: 8 } },
    ...extra,
  };
}

/**
 * POST/GET/DELETE /v1/environments through real HTTP, against environment servers in processes
 * of their own: admins register (audited), members cannot, a server that is not there or answers
 * badly is refused naming `url`, a clashing id naming `id`, and removal leaves the built-ins.
 */
describe('environment registry (real HTTP, real servers)', () => {
  const stack = new TestStack();
  let server: EnvServer;
  let garbled: EnvServer;
  let openenv: EnvServer;
  let memberKey: string;
  let servedExperiment = '';
  let servedJobId = '';

  beforeAll(async () => {
    await stack.start();
    [server, garbled, openenv] = await Promise.all([
      startEnvServer('python', { args: ['--max', '4', '--guesses', '2', '--no-fork'] }),
      startEnvServer('node', { fault: { kind: 'garbage', on: ['manifest'] } }),
      startEnvServer('openenv', { args: ['--max', '4', '--guesses', '2'] }),
    ]);
    stack.startWorker('worker-env');
    memberKey = (await stack.request('POST', '/v1/users', { body: { name: 'mia' } })).body.apiKey.key;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([server?.stop(), garbled?.stop(), openenv?.stop()]);
    await stack.stop();
  }, 30_000);

  const register = (body: unknown, key?: string) => stack.request('POST', '/v1/environments', { body, key });
  const fields = (problem: { errors?: { field: string }[] }) => (problem.errors ?? []).map((e) => e.field);

  it('lets an admin register a server: its manifest read, its fork probed, the registration audited', async () => {
    const created = await register({ id: 'guess-served', url: server.url });
    expect([created.status, created.body.detail]).toEqual([201, undefined]);
    expect(created.body).toMatchObject({ id: 'guess-served', hasExpert: true, configSchema: { type: 'object' }, server: { protocol: 'starlab', url: server.url, fork: false, registeredBy: expect.any(String) } });
    expect(created.body.server.digest).toMatch(/^[0-9a-f]{64}$/);
    const audit = await stack.request('GET', '/v1/audit?action=environment.register');
    expect(audit.body.data).toEqual([expect.objectContaining({ targetType: 'environment', targetId: 'guess-served', data: expect.objectContaining({ url: server.url }) })]);
  }, 30_000);

  it('refuses members (403) before contacting anything', async () => {
    const refused = await register({ id: 'mine', url: server.url }, memberKey);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect((await stack.request('DELETE', '/v1/environments/guess-served', { key: memberKey })).status).toBe(403);
  });

  it('refuses a server that does not answer, or answers badly, naming url', async () => {
    const absent = await register({ id: 'absent', url: 'http://127.0.0.1:9' });
    expect(absent.status).toBe(400);
    expect(fields(absent.body)).toEqual(['body.url']);
    const bad = await register({ id: 'garbled', url: garbled.url });
    expect(bad.status).toBe(400);
    expect(fields(bad.body)).toEqual(['body.url']);
    expect(bad.body.detail).toMatch(/GET \/manifest/);
    const scheme = await register({ id: 'ftp', url: 'ftp://127.0.0.1/' });
    expect(fields(scheme.body)).toEqual(['body.url']);
  }, 60_000);

  it('refuses an id clashing with a built-in (400) or a registration (409), naming id', async () => {
    const builtIn = await register({ id: 'frozenlake', url: server.url });
    expect(builtIn.status).toBe(400);
    expect(fields(builtIn.body)).toEqual(['body.id']);
    const again = await register({ id: 'guess-served', url: server.url });
    expect(again.status).toBe(409);
    expect(fields(again.body)).toEqual(['body.id']);
    expect(fields((await register({ id: 'x'.repeat(65), url: server.url })).body)).toEqual(['body.id']);
  });

  it('lists built-ins and registered servers alike, to members too', async () => {
    const listed = await stack.request('GET', '/v1/environments', { key: memberKey });
    const byId = Object.fromEntries(listed.body.data.map((e: { id: string }) => [e.id, e]));
    expect(byId.frozenlake.server).toBeNull();
    // The recipe a job gets, and what the non-slippery lake's config changes in it (recipes.ts).
    expect(byId.frozenlake.recipes.demonstrations).toMatchObject({ spec: { training: { warmup: { steps: 1600, batchSize: 128 } } }, where: { config: { slippery: false }, spec: { training: { warmup: { steps: 10000 } } } } });
    expect(byId.frozenlake.recipes.format).toMatchObject({
      spec: { algorithm: { selfImitationSelect: 'advantage' }, rollout: { groups: 64, groupSize: 4, maxActionsPerTurn: 1 } },
      where: { config: { slippery: true }, spec: { rollout: { maxTurns: 10 }, training: { curriculumShare: 0.5, curriculumConfig: { slippery: false } } } },
    });
    expect(byId.sokoban.recipes.demonstrations.where).toBeUndefined();
    expect(byId['guess-served'].server).toMatchObject({ protocol: 'starlab' });
    expect((await stack.request('GET', '/v1/environments/guess-served', { key: memberKey })).body.id).toBe('guess-served');
    expect((await stack.request('GET', '/v1/environments/nowhere', { key: memberKey })).status).toBe(404);
  });

  it('validates jobs on a registered id with its served definition: arpo needs fork', async () => {
    const arpo = await stack.request('POST', '/v1/jobs', { body: servedJob('guess-served', { algorithm: { id: 'arpo' } }) });
    expect(arpo.status).toBe(400);
    expect(fields(arpo.body)).toContain('algorithm.id');
    const experiment = await stack.request('POST', '/v1/experiments', { body: { name: 'arpo-grid', base: servedJob('guess-served'), grid: { 'algorithm.id': ['starpo-s', 'arpo'] } } });
    expect(experiment.status).toBe(400);
    expect(fields(experiment.body).some((f) => f.startsWith('grid.algorithm.id'))).toBe(true);
    const unknown = await stack.request('POST', '/v1/jobs', { body: servedJob('nowhere') });
    expect(fields(unknown.body)).toContain('environment.id');
  });

  it('trains a job on a registered StarLab-protocol server to succeeded, by a member', async () => {
    const submitted = await stack.request('POST', '/v1/jobs', { body: servedJob('guess-served'), key: memberKey });
    expect(submitted.status).toBe(201);
    const done = await stack.waitForJob(submitted.body.id, (job) => hasEnded(job.status), 120_000, memberKey);
    expect(done).toMatchObject({ status: 'succeeded', currentStep: 3, error: null });
    servedJobId = submitted.body.id;
  }, 150_000);

  it('evaluates a registered job’s checkpoint on its server, and names an unknown environment', async () => {
    const created = await stack.request('POST', `/v1/jobs/${servedJobId}/evaluations`, { body: { episodes: 6, k: 2 }, key: memberKey });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', step: 3, environment: { id: 'guess-served', config: {} } });
    let evaluation = created.body;
    const deadline = Date.now() + 60_000;
    while (['queued', 'running'].includes(evaluation.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      evaluation = (await stack.request('GET', created.headers.get('location')!, { key: memberKey })).body;
    }
    expect(evaluation).toMatchObject({ status: 'succeeded', error: null });
    // 6 seeds × 2 samples: success is a multiple of 1/12, pass@2 of 1/6, and pass@2 ≥ success.
    expect(Number.isInteger(Math.round(evaluation.success * 12 * 1e9) / 1e9)).toBe(true);
    expect(evaluation.passAtK).toBeGreaterThanOrEqual(evaluation.success);
    expect(evaluation.samples[0]).toMatch(/^--- turn 1 ---/);
    const unknown = await stack.request('POST', `/v1/jobs/${servedJobId}/evaluations`, { body: { environment: { id: 'nowhere' } }, key: memberKey });
    expect(unknown.status).toBe(400);
    expect(fields(unknown.body)).toEqual(['body.environment.id']);
  }, 90_000);

  it('computes an experiment’s references (random agent, expert) on the registered server, on the cell’s evaluation seeds', async () => {
    const base = servedJob('guess-served', { training: { steps: 1, evalEvery: 0, evalEpisodes: 8, checkpointEvery: 1, warmup: { kind: 'format', steps: 1, batchSize: 8 } } });
    const created = await stack.request('POST', '/v1/experiments', { body: { name: 'served-refs', base, grid: { 'training.seed': [3] } } });
    expect([created.status, created.body.detail]).toEqual([201, undefined]);
    const deadline = Date.now() + 120_000;
    let body: any;
    do {
      await new Promise((resolve) => setTimeout(resolve, 300));
      body = (await stack.request('GET', `/v1/experiments/${created.body.id}`)).body;
    } while (!(body.status === 'succeeded' && body.references === 'ready') && Date.now() < deadline);
    expect([body.status, body.references]).toEqual(['succeeded', 'ready']);
    servedExperiment = created.body.id;
    const connected = await connectServedEnvironment('guess-served', { protocol: 'starlab', url: server.url });
    try {
      const expected = await references(parseJobSpec({ ...base, training: { ...base.training, seed: 3 } }, connected.definition), connected.definition);
      expect(expected.expert).not.toBeNull();
      expect([body.cells[0].random, body.cells[0].expert]).toEqual([expected.random, expected.expert]);
    } finally {
      connected.dispose();
    }
  }, 150_000);

  it('trains a job on a registered OpenEnv server to succeeded', async () => {
    const words = ['one', 'two', 'three', 'four'];
    const created = await register({ id: 'guess-ws', url: openenv.url, protocol: 'openenv', openenv: { observationField: 'message', actionField: 'guess', actions: words, maxTurns: 2 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ actions: words, hasExpert: false, server: { protocol: 'openenv', fork: false } });
    const demos = await stack.request('POST', '/v1/jobs', { body: { ...servedJob('guess-ws'), training: { steps: 2, warmup: { kind: 'demonstrations' } } } });
    expect(demos.status).toBe(400);
    expect(fields(demos.body)).toContain('training.warmup.kind');
    const submitted = await stack.request('POST', '/v1/jobs', { body: servedJob('guess-ws') });
    expect(submitted.status).toBe(201);
    const done = await stack.waitForJob(submitted.body.id, (job) => hasEnded(job.status), 120_000);
    expect(done).toMatchObject({ status: 'succeeded', currentStep: 3 });
  }, 150_000);

  it('fails a job whose server is killed mid-training, naming the environment and the request; keeps its checkpoints; refuses a drifted manifest; resumes when the server is back', async () => {
    const args = ['--max', '4', '--guesses', '2', '--no-fork'];
    const dying = await startEnvServer('python', { args });
    try {
      expect((await register({ id: 'guess-dying', url: dying.url })).status).toBe(201);
      const job = (await stack.request('POST', '/v1/jobs', { body: servedJob('guess-dying', { training: { steps: 30, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 1, trajectoryTextSample: 1, warmup: { kind: 'format', steps: 1, batchSize: 8 } } }) })).body;
      await stack.waitForJob(job.id, (j) => j.currentStep >= 2 || hasEnded(j.status), 120_000);
      await dying.stop();
      const failed = await stack.waitForJob(job.id, (j) => hasEnded(j.status), 120_000);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/environment 'guess-dying': (GET|POST) \/\w+/);
      const events = JSON.stringify((await stack.request('GET', `/v1/jobs/${job.id}/events`)).body);
      expect(events).toContain("environment 'guess-dying'");
      const kept = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data;
      expect(kept.length).toBeGreaterThan(0);

      // Back with another game: the resumed job is refused before training on mismatched tokens.
      await dying.restart({ args: ['--max', '5', '--guesses', '2', '--no-fork'] });
      expect((await stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: {} })).status).toBe(200);
      const drifted = await stack.waitForJob(job.id, (j) => hasEnded(j.status), 120_000);
      expect([drifted.status, drifted.error]).toEqual(['failed', expect.stringMatching(/guess-dying.*another manifest/)]);

      // Back as it was: resumed from its last checkpoint, to the end, no step written twice.
      await dying.restart({ args });
      expect((await stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: {} })).status).toBe(200);
      const done = await stack.waitForJob(job.id, (j) => hasEnded(j.status), 150_000);
      expect([done.status, done.currentStep]).toEqual(['succeeded', 30]);
      const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=loss`)).body.data.map((row: { step: number }) => row.step);
      expect(new Set(steps).size).toBe(steps.length);
      // The worker lived through it: another job still trains.
      const after = (await stack.request('POST', '/v1/jobs', { body: servedJob('guess-served') })).body;
      expect((await stack.waitForJob(after.id, (j) => hasEnded(j.status), 120_000)).status).toBe('succeeded');
    } finally {
      await dying.stop();
    }
  }, 400_000);

  it('deletes a registration (audited); built-ins stay; a job running on it fails at once, and one resumed on it fails, naming it', async () => {
    const long = { steps: 200, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 1, trajectoryTextSample: 1, warmup: { kind: 'format', steps: 1, batchSize: 8 } };
    const running = (await stack.request('POST', '/v1/jobs', { body: servedJob('guess-served', { training: long }) })).body;
    await stack.waitForJob(running.id, (j) => j.status === 'running' && j.currentStep >= 1, 60_000);
    const paused = (await stack.request('POST', '/v1/jobs', { body: servedJob('guess-served', { training: { steps: 30, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 1, trajectoryTextSample: 1, warmup: { kind: 'format', steps: 1, batchSize: 8 } } }) })).body;
    expect((await stack.request('POST', `/v1/jobs/${paused.id}/pause`)).status).toBe(200);
    await stack.waitForJob(paused.id, (j) => j.status === 'paused', 60_000);
    expect((await stack.request('DELETE', '/v1/environments/guess-served')).status).toBe(204);
    const stopped = await stack.waitForJob(running.id, (j) => hasEnded(j.status), 60_000);
    expect([stopped.status, stopped.error]).toEqual(['failed', expect.stringMatching(/environment 'guess-served' was deleted by an admin while the job trained on it/)]);
    expect(stopped.currentStep).toBeLessThan(200);
    expect((await stack.request('GET', `/v1/jobs/${running.id}/checkpoints`)).body.data.length).toBeGreaterThan(0);
    expect((await stack.request('POST', `/v1/jobs/${paused.id}/resume`)).status).toBe(200);
    const orphan = await stack.waitForJob(paused.id, (j) => hasEnded(j.status), 60_000);
    expect([orphan.status, orphan.error]).toEqual(['failed', expect.stringMatching(/environment 'guess-served' is not registered any more/)]);
    expect((await stack.request('GET', '/v1/environments/guess-served')).status).toBe(404);
    // Stored results stay readable: the experiment trained on it still shows its table.
    const experiment = await stack.request('GET', `/v1/experiments/${servedExperiment}`);
    expect([experiment.status, experiment.body.cells[0].finished]).toEqual([200, 1]);
    expect((await stack.request('DELETE', '/v1/environments/guess-served')).status).toBe(404);
    expect((await stack.request('DELETE', '/v1/environments/frozenlake')).status).toBe(404);
    const audit = await stack.request('GET', '/v1/audit?action=environment.delete');
    expect(audit.body.data.map((e: { targetId: string }) => e.targetId)).toEqual(['guess-served']);
  });
});

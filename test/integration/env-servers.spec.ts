/**
 * The environment servers the remote-environment tests start (test/support/env-servers/): each in
 * its own process, checked with plain fetch (and a WebSocket for the OpenEnv one), so a failure of
 * a client test can be told apart from a server that does not do what it claims.
 */
import { FrozenLakeEnv } from '../../src/training/envs/frozenlake';
import { REMOTE_BOUNDS } from '../../src/training/envs/remote-bounds';
import { faultHits, setFault, startEnvServer, startProtocolServer, type EnvServer } from '../support/env-servers/start';
import { WsClient } from '../support/env-servers/ws-client';

const WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen'];

async function call(server: EnvServer, path: string, body?: unknown, init: RequestInit = {}): Promise<{ status: number; body: any; type: string | null }> {
  const response = await fetch(`${server.url}${path}`, body === undefined ? init : { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, ...init });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // left as text: the garbage fault's body
  }
  return { status: response.status, body: parsed, type: response.headers.get('content-type') };
}

/** Plays `actions` from `seed` and returns every answer (reset first). */
async function play(server: EnvServer, seed: number, actions: readonly string[]): Promise<unknown[]> {
  const reset = await call(server, '/reset', { seed });
  const answers: unknown[] = [reset.body.observation];
  for (const action of actions) answers.push((await call(server, '/step', { session: reset.body.session, action })).body);
  await call(server, '/close', { session: reset.body.session });
  return answers;
}

describe('the node test server: a built-in FrozenLake over the StarLab protocol', () => {
  let server: EnvServer;
  beforeAll(async () => {
    server = await startEnvServer('node', { args: ['--config', JSON.stringify({ slippery: true })] });
  }, 60_000);
  afterAll(() => server?.stop());

  it('serves the manifest of the built-in: its actions, vocabulary and expert', async () => {
    const { status, body } = await call(server, '/manifest');
    expect(status).toBe(200);
    expect(body).toMatchObject({ actions: ['Up', 'Down', 'Left', 'Right'], expert: true });
    expect(body.vocabulary).toEqual(['P', '_', 'O', 'G', 'X', '√', '\n']);
    expect(body.maxTurns).toBeUndefined();
  });

  it('plays the same episode as the built-in for the same seed and actions, slips included', async () => {
    const actions = ['Down', 'Right', 'Right', 'Up', 'Left', 'Down'];
    for (const seed of [1, 2, 3]) {
      const local = new FrozenLakeEnv({ slippery: true });
      const expected: unknown[] = [local.reset(seed)];
      for (const action of actions) {
        if (local.done) break;
        const result = local.step(action);
        expected.push({ observation: result.observation, reward: result.reward, done: result.done, success: result.info.success });
      }
      expect(await play(server, seed, actions.slice(0, expected.length - 1))).toEqual(expected);
    }
  });

  it('refuses an action outside the set, an unknown session and a step after the end, naming the field', async () => {
    const { body: reset } = await call(server, '/reset', { seed: 4 });
    const foreign = await call(server, '/step', { session: reset.session, action: 'Jump' });
    expect(foreign).toMatchObject({ status: 400, type: 'application/problem+json', body: { errors: [{ field: 'action' }] } });
    expect(await call(server, '/step', { session: 'nope', action: 'Up' })).toMatchObject({ status: 404, body: { errors: [{ field: 'session' }] } });
    expect(await call(server, '/reset', { seed: -1 })).toMatchObject({ status: 400, body: { errors: [{ field: 'seed' }] } });
    expect(await call(server, '/reset', { seed: 2 ** 32 })).toMatchObject({ status: 400, body: { errors: [{ field: 'seed' }] } });
    expect((await call(server, '/reset', { seed: 2 ** 31 + 5 })).status).toBe(200);
    expect(await call(server, '/reset', '{not json')).toMatchObject({ status: 400, body: { detail: 'the body is not JSON' } });
    // The expert walks to the goal on non-slippery ice: after it, the episode is over.
    const calm = await startEnvServer('node', { args: ['--config', JSON.stringify({ slippery: false })] });
    try {
      const { body: episode } = await call(calm, '/reset', { seed: 4 });
      const { body: plan } = await call(calm, '/expert', { session: episode.session });
      let last: any;
      for (const action of plan.actions) last = (await call(calm, '/step', { session: episode.session, action })).body;
      expect(last).toMatchObject({ reward: 1, done: true, success: true });
      expect(await call(calm, '/step', { session: episode.session, action: 'Up' })).toMatchObject({ status: 409 });
    } finally {
      await calm.stop();
    }
  });

  it('forks a live episode into an independent copy, and closes sessions', async () => {
    const { body: reset } = await call(server, '/reset', { seed: 5 });
    await call(server, '/step', { session: reset.session, action: 'Down' });
    const { status, body: fork } = await call(server, '/fork', { session: reset.session });
    expect(status).toBe(200);
    expect(fork.session).not.toBe(reset.session);
    const fromCopy = (await call(server, '/step', { session: fork.session, action: 'Right' })).body;
    const fromOriginal = (await call(server, '/step', { session: reset.session, action: 'Right' })).body;
    // The copy carries the slip generator's state: the same action from the same state lands alike.
    expect(fromCopy).toEqual(fromOriginal);
    expect((await call(server, '/close', { session: fork.session })).status).toBe(204);
    expect((await call(server, '/step', { session: fork.session, action: 'Up' })).status).toBe(404);
  });

  it('without fork and expert, answers 404 to both and says "expert": false', async () => {
    const bare = await startEnvServer('node', { args: ['--no-fork', '--no-expert', '--env', 'bandit'] });
    try {
      const { body: manifest } = await call(bare, '/manifest');
      expect(manifest).toMatchObject({ expert: false, maxTurns: 1 });
      const { body: reset } = await call(bare, '/reset', { seed: 1 });
      expect((await call(bare, '/fork', { session: reset.session })).status).toBe(404);
      expect((await call(bare, '/expert', { session: reset.session })).status).toBe(404);
    } finally {
      await bare.stop();
    }
  });
});

describe('the node test server’s faults', () => {
  let server: EnvServer;
  beforeAll(async () => {
    server = await startEnvServer('node');
  }, 60_000);
  afterAll(() => server?.stop());
  afterEach(() => setFault(server, { kind: 'none' }));

  it('unavailable: 503 with Retry-After for `count` requests after `after` good ones, then healthy again', async () => {
    await setFault(server, { kind: 'unavailable', on: ['reset'], after: 1, count: 2 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(server, '/reset', { seed: 1 })).status);
    expect(statuses).toEqual([200, 503, 503, 200]);
    const response = await fetch(`${server.url}/reset`, { method: 'POST', body: '{"seed":1}' });
    expect(response.status).toBe(200);
    await setFault(server, { kind: 'unavailable', on: ['manifest'] });
    const down = await fetch(`${server.url}/manifest`);
    expect([down.status, down.headers.get('retry-after')]).toEqual([503, '0']);
    expect(await faultHits(server)).toBe(1);
  });

  it('hang: the request is never answered', async () => {
    await setFault(server, { kind: 'hang', on: ['step'] });
    const { body: reset } = await call(server, '/reset', { seed: 1 });
    const started = Date.now();
    await expect(fetch(`${server.url}/step`, { method: 'POST', body: JSON.stringify({ session: reset.session, action: 'Up' }), signal: AbortSignal.timeout(300) })).rejects.toThrow(/abort|timeout/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('garbage, wrong types, a foreign action, an oversize observation, thousands of actions', async () => {
    await setFault(server, { kind: 'garbage', on: ['reset'] });
    const garbage = await call(server, '/reset', { seed: 1 });
    expect([garbage.status, garbage.type, garbage.body]).toEqual([200, 'application/json', '<html>502 Bad Gateway</html']);

    await setFault(server, { kind: 'wrong-types', on: ['reset', 'step'] });
    const wrong = (await call(server, '/reset', { seed: 1 })).body;
    expect([typeof wrong.session, typeof wrong.observation]).toEqual(['number', 'number']);

    await setFault(server, { kind: 'foreign-action', on: ['reset', 'expert'] });
    const foreign = (await call(server, '/reset', { seed: 1 })).body;
    expect(foreign.actions).toContain('Jump');
    expect((await call(server, '/expert', { session: foreign.session })).body).toEqual({ actions: ['Jump'] });

    await setFault(server, { kind: 'oversize-observation', on: ['reset'] });
    expect((await call(server, '/reset', { seed: 1 })).body.observation).toHaveLength(REMOTE_BOUNDS.observationChars + 1);

    await setFault(server, { kind: 'many-actions', on: ['manifest'] });
    expect((await call(server, '/manifest')).body.actions).toHaveLength(5000);
  });

  it('missing: an answer without its observation', async () => {
    await setFault(server, { kind: 'missing', on: ['reset'] });
    const answer = (await call(server, '/reset', { seed: 1 })).body;
    expect(Object.keys(answer)).toEqual(['session']);
  });

  it('drift: the manifest gains a word after `after` good answers', async () => {
    await setFault(server, { kind: 'drift', after: 1 });
    const first = (await call(server, '/manifest')).body;
    const second = (await call(server, '/manifest')).body;
    expect(first.vocabulary).not.toContain('drifted');
    expect(second.vocabulary).toEqual([...first.vocabulary, 'drifted']);
  });

  it('refuses an unknown fault', async () => {
    const response = await fetch(`${server.url}/__faults`, { method: 'POST', body: JSON.stringify({ kind: 'melt' }) });
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/unknown fault 'melt'/);
  });

  it('die: the process exits on the step after `after` steps, from flags or the environment', async () => {
    for (const options of [{ fault: { kind: 'die' as const, on: ['step' as const], after: 2 } }, { env: { STARLAB_ENV_FAULT: 'die', STARLAB_ENV_FAULT_ON: 'step', STARLAB_ENV_FAULT_AFTER: '2' } }]) {
      const dying = await startEnvServer('node', options);
      try {
        // A fresh episode for each step: the count is of steps, whichever the session.
        const step = async () => call(dying, '/step', { session: (await call(dying, '/reset', { seed: 3 })).body.session, action: 'Left' });
        expect((await step()).status).toBe(200);
        expect((await step()).status).toBe(200);
        await expect(step()).rejects.toThrow();
        expect(await dying.exited).toBe(3);
      } finally {
        await dying.stop();
      }
    }
  });

  it('restart: the same port serves again, with other options', async () => {
    const node = await startEnvServer('node');
    try {
      const before = (await call(node, '/manifest')).body;
      await node.restart({ fault: { kind: 'drift' } });
      expect((await call(node, '/manifest')).body.vocabulary).toEqual([...before.vocabulary, 'drifted']);
    } finally {
      await node.stop();
    }
  });
});

describe('startProtocolServer: one-word modes and request counts', () => {
  it('turns bad at once and heals, and counts requests and open sessions', async () => {
    const server = await startProtocolServer({ env: 'frozenlake', config: { slippery: false } });
    try {
      const reset = (await (await fetch(`${server.url}/reset`, { method: 'POST', body: '{"seed":1}' })).json()) as any;
      const step = () => fetch(`${server.url}/step`, { method: 'POST', body: JSON.stringify({ session: reset.session, action: 'Up' }) });
      await server.setMode('503');
      expect((await step()).status).toBe(503);
      expect((await fetch(`${server.url}/manifest`)).status).toBe(503);
      await server.setMode('foreign');
      expect(((await (await step()).json()) as any).actions).toContain('Jump');
      await server.setMode('thousands');
      expect(((await (await fetch(`${server.url}/manifest`)).json()) as any).actions).toHaveLength(5000);
      await server.setMode('ok');
      expect((await step()).status).toBe(200);
      expect(await server.counts()).toEqual({ '/reset': 1, '/step': 3, '/manifest': 2, open: 1 });
      await expect(server.setMode('melt')).rejects.toThrow(/'mode' must be one of .*thousands/);
    } finally {
      await server.stop();
    }
  });
});

describe('examples/environments/guess_number_server.py', () => {
  let server: EnvServer;
  beforeAll(async () => {
    server = await startEnvServer('python');
  }, 60_000);
  afterAll(() => server?.stop());

  it('serves a manifest of 15 number actions, 4 turns, its words and an expert', async () => {
    const { status, body } = await call(server, '/manifest');
    expect(status).toBe(200);
    expect(body.actions).toEqual(WORDS);
    expect(body).toMatchObject({ maxTurns: 4, expert: true, vocabulary: ['guess', 'the', 'number', 'too', 'low', 'high', 'right'] });
  });

  it('is deterministic per seed: seed 7 hides 6, found by binary search in three guesses', async () => {
    // Python's random.Random(7).randint(1, 15) is 6: 8 is too high, 4 too low, 6 right.
    const expected = ['guess the number', { observation: 'too high', reward: 0, done: false }, { observation: 'too low', reward: 0, done: false }, { observation: 'right', reward: 1, done: true, success: true }];
    expect(await play(server, 7, ['eight', 'four', 'six'])).toEqual(expected);
    expect(await play(server, 7, ['eight', 'four', 'six'])).toEqual(expected);
    // StarLab's evaluation seeds lie from 2^31 up.
    expect((await call(server, '/reset', { seed: 2 ** 32 - 1 })).status).toBe(200);
  });

  it('the expert is binary search, and wins in four guesses (seed 6 hides 13)', async () => {
    const { body: reset } = await call(server, '/reset', { seed: 6 });
    const guesses = [];
    let last: any;
    for (let turn = 0; turn < 4; turn++) {
      const { body: plan } = await call(server, '/expert', { session: reset.session });
      guesses.push(...plan.actions);
      last = (await call(server, '/step', { session: reset.session, action: plan.actions[0] })).body;
    }
    expect(guesses).toEqual(['eight', 'twelve', 'fourteen', 'thirteen']);
    expect(last).toEqual({ observation: 'right', reward: 1, done: true, success: true });
    expect((await call(server, '/expert', { session: reset.session })).body).toEqual({ actions: [] });
  });

  it('ends the episode after four wrong guesses with reward 0 and success false', async () => {
    const answers = await play(server, 0, ['one', 'two', 'three', 'four']); // seed 0 hides 14
    expect(answers[4]).toEqual({ observation: 'too low', reward: 0, done: true, success: false });
  });

  it('forks a live episode: the copy plays on alone', async () => {
    const { body: reset } = await call(server, '/reset', { seed: 7 });
    await call(server, '/step', { session: reset.session, action: 'eight' });
    const { body: fork } = await call(server, '/fork', { session: reset.session });
    expect((await call(server, '/step', { session: fork.session, action: 'six' })).body).toMatchObject({ done: true, reward: 1 });
    // The original still has three guesses and its own state.
    expect((await call(server, '/step', { session: reset.session, action: 'five' })).body).toEqual({ observation: 'too low', reward: 0, done: false });
    expect((await call(server, '/expert', { session: reset.session })).body).toEqual({ actions: ['six'] });
  });

  it('refuses bad requests with problem+json naming the field', async () => {
    const { body: reset } = await call(server, '/reset', { seed: 1 });
    expect(await call(server, '/step', { session: reset.session, action: 'sixteen' })).toMatchObject({ status: 400, type: 'application/problem+json', body: { errors: [{ field: 'action' }] } });
    expect(await call(server, '/step', { session: reset.session, action: 8 })).toMatchObject({ status: 400, body: { errors: [{ field: 'action' }] } });
    expect(await call(server, '/reset', { seed: true })).toMatchObject({ status: 400, body: { errors: [{ field: 'seed' }] } });
    expect(await call(server, '/reset', { seed: 2 ** 32 })).toMatchObject({ status: 400, body: { errors: [{ field: 'seed' }] } });
    expect(await call(server, '/reset', '[1]')).toMatchObject({ status: 400, body: { detail: 'the body must be a JSON object' } });
    expect(await call(server, '/reset', 'nope')).toMatchObject({ status: 400, body: { detail: 'the body is not JSON' } });
    expect(await call(server, '/step', { session: 'gone', action: 'one' })).toMatchObject({ status: 404, body: { errors: [{ field: 'session' }] } });
    expect((await call(server, '/nothing', {})).status).toBe(404);
    expect((await call(server, '/close', { session: reset.session })).status).toBe(204);
    expect((await call(server, '/step', { session: reset.session, action: 'one' })).status).toBe(404);
    const done = await call(server, '/reset', { seed: 7 });
    await call(server, '/step', { session: done.body.session, action: 'six' });
    expect(await call(server, '/step', { session: done.body.session, action: 'six' })).toMatchObject({ status: 409 });
  });

  it('serves 64 concurrent episodes over kept-alive connections, each as if alone', async () => {
    const seeds = Array.from({ length: 64 }, (_, i) => i);
    const runs = await Promise.all(seeds.map((seed) => play(server, seed, ['eight', 'eight'])));
    const alone = await play(server, 5, ['eight', 'eight']); // seed 5 hides 10
    expect(runs[5]).toEqual(alone);
    expect(alone[1]).toEqual({ observation: 'too low', reward: 0, done: false });
  });

  it('with --max and --no-fork, serves another manifest and no fork', async () => {
    const small = await startEnvServer('python', { args: ['--max', '7', '--guesses', '3', '--no-fork'] });
    try {
      expect((await call(small, '/manifest')).body).toMatchObject({ actions: WORDS.slice(0, 7), maxTurns: 3 });
      const { body: reset } = await call(small, '/reset', { seed: 1 });
      expect((await call(small, '/fork', { session: reset.session })).status).toBe(404);
    } finally {
      await small.stop();
    }
  });
});

describe('examples/environments/openenv_server.py', () => {
  let server: EnvServer;
  let ws: WsClient | undefined;
  beforeAll(async () => {
    server = await startEnvServer('openenv');
  }, 60_000);
  afterEach(() => ws?.close());
  afterAll(() => server?.stop());

  const observation = (message: string, reward: number | null, done: boolean) => ({
    type: 'observation',
    data: { observation: { message, legal_actions: WORDS }, reward, done },
  });

  it('plays an episode over /ws in OpenEnv’s message shapes, deterministic per seed', async () => {
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    for (let round = 0; round < 2; round++) {
      ws = await WsClient.connect(server.url);
      expect(await ws.call({ type: 'reset', data: { seed: 7 } })).toEqual(observation('guess the number', null, false));
      expect(await ws.call({ type: 'step', data: { guess: 'eight' } })).toEqual(observation('too high', 0, false));
      expect(await ws.call({ type: 'state' })).toMatchObject({ type: 'state', data: { step_count: 1 } });
      expect(await ws.call({ type: 'step', data: { guess: 'six' } })).toEqual(observation('right', 1, true));
      ws.send(JSON.stringify({ type: 'close' }));
      expect(await ws.next()).toBeNull();
      expect(ws.closeCode).toBe(1000);
    }
  });

  it('answers what it cannot serve with OpenEnv’s error codes and keeps the session', async () => {
    ws = await WsClient.connect(server.url);
    expect(await ws.call({ type: 'step', data: { guess: 'three' } })).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR' } });
    ws.send('{not json');
    expect(JSON.parse((await ws.next())!)).toMatchObject({ type: 'error', data: { code: 'INVALID_JSON' } });
    expect(await ws.call({ type: 'dance' })).toMatchObject({ type: 'error', data: { code: 'UNKNOWN_TYPE' } });
    expect(await ws.call({ type: 'reset', data: { seed: 'x' } })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    await ws.call({ type: 'reset', data: { seed: 0 } });
    expect(await ws.call({ type: 'step', data: { guess: '99' } })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(await ws.call({ type: 'step', data: { action: 'nine' } })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(await ws.call({ type: 'step', data: { guess: 'fourteen' } })).toEqual(observation('right', 1, true));
    expect(await ws.call({ type: 'step', data: { guess: 'fourteen' } })).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR' } });
  });

  it('answers GET /health and /schema over plain HTTP on the same port', async () => {
    expect(await (await fetch(`${server.base}/health`)).json()).toEqual({ status: 'healthy' });
    const schema = (await (await fetch(`${server.base}/schema`)).json()) as any;
    expect(schema.action.properties.guess.enum).toHaveLength(15);
    expect((await fetch(`${server.base}/elsewhere`)).status).toBe(404);
  });
});

/**
 * The OpenEnv dialect against a WebSocket server that answers as OpenEnv's `/ws` sessions do
 * (reset, step and close messages; observation answers with `observation`, `reward`, `done`),
 * serving the built-in FrozenLake: the same episode as in-process, and its failures named.
 */
import { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { connectServedEnvironment } from '../../src/repositories/env-servers';
import { FrozenLakeEnv } from '../../src/training/envs/frozenlake';
import { EnvServerError } from '../../src/training/envs/remote/protocol';

type Behaviour = 'ok' | 'error' | 'drop';

describe('the OpenEnv client', () => {
  let server: WebSocketServer;
  let url: string;
  let behaviour: Behaviour = 'ok';
  let closes = 0;
  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/ws' });
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('connection', (socket) => {
      const env = new FrozenLakeEnv();
      socket.on('message', (raw) => {
        const message = JSON.parse(raw.toString()) as { type: string; data?: Record<string, unknown> };
        if (message.type === 'close') return void closes++;
        if (message.type === 'step' && behaviour === 'drop') return socket.terminate();
        if (message.type === 'step' && behaviour === 'error') return socket.send(JSON.stringify({ type: 'error', data: { message: 'invalid action', code: 'VALIDATION_ERROR' } }));
        const observation = message.type === 'reset' ? { text: env.reset(message.data!.seed as number), reward: null, done: false } : (() => {
          const result = env.step(message.data!.move as string);
          return { text: result.observation, reward: result.reward, done: result.done };
        })();
        socket.send(JSON.stringify({ type: 'observation', data: { observation: { text: observation.text }, reward: observation.reward, done: observation.done } }));
      });
    });
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  afterEach(() => {
    behaviour = 'ok';
  });

  const connect = () =>
    connectServedEnvironment('openlake', { url, protocol: 'openenv', mapping: { observationField: 'text', actionField: 'move', actions: ['Up', 'Down', 'Left', 'Right'] } }, { timeoutMs: 1000, retries: 1, backoffMs: 10 });

  it('plays the same episode as the built-in, one connection per episode, and closes it', async () => {
    const { definition, dispose } = await connect();
    try {
      expect(definition.served).toMatchObject({ protocol: 'openenv', fork: false, observationTokens: 19 });
      const remote = definition.create({});
      const local = new FrozenLakeEnv();
      expect(await remote.reset(21)).toBe(local.reset(21));
      for (const action of ['Left', 'Down', 'Down', 'Right', 'Up', 'Right', 'Down']) {
        const [a, b] = [await remote.step(action), local.step(action)];
        expect([a.observation, a.reward, a.done, a.info.success]).toEqual([b.observation, b.reward, b.done, b.info.success]);
        if (b.done) break;
      }
      const before = closes;
      await remote.close?.();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(closes).toBe(before + 1);
    } finally {
      dispose();
    }
  });

  it.each([
    ['error', 'malformed', /environment 'openlake': step \(action Up\) was answered badly: the server says: invalid action/],
    ['drop', 'unavailable', /environment 'openlake': step \(action Up\) failed: the server closed the connection/],
  ] as const)('a server that answers a step with %s fails the step, naming it', async (mode, failure, message) => {
    const { definition, dispose } = await connect();
    try {
      const remote = definition.create({});
      await remote.reset(4);
      behaviour = mode;
      const error = (await Promise.resolve(remote.step('Up')).catch((e: unknown) => e)) as EnvServerError;
      expect(error).toBeInstanceOf(EnvServerError);
      expect(error.failure).toBe(failure);
      expect(error.message).toMatch(message);
    } finally {
      dispose();
    }
  });

  it('refuses an unreachable server after its retries', async () => {
    await expect(
      connectServedEnvironment('gone', { url: 'http://127.0.0.1:9', protocol: 'openenv', mapping: { observationField: 'text', actionField: 'move', actions: ['Up'] } }, { timeoutMs: 500, retries: 1, backoffMs: 10 }),
    ).rejects.toThrow(/environment 'gone': reset \(seed 0\) failed: .*ECONNREFUSED.* \(2 tries\)/);
  });
});

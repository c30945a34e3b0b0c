/**
 * The StarLab protocol client against a real server process (test/support/protocol-server.ts):
 * an episode played through `RemoteEnv`, the open vocabulary, and every way a server can fail —
 * each an `EnvServerError` that names the environment and the request, never a hang or a crash.
 */
import { EnvHttpTransport } from '../../src/repositories/env-http-transport';
import { connectServedEnvironment, openSessions } from '../../src/repositories/env-servers';
import { frozenLakeExpert } from '../../src/training/envs/experts';
import { FrozenLakeEnv } from '../../src/training/envs/frozenlake';
import { EnvServerError, readManifest } from '../../src/training/envs/remote/protocol';
import { RemoteEnv, manifestDigest } from '../../src/training/envs/remote/remote-env';
import { CHARACTER_TOKENS, SPECIAL_TOKENS, Tokenizer } from '../../src/training/policy/tokenizer';
import { ProtocolServer, startProtocolServer } from '../support/protocol-server';

const FAST = { timeoutMs: 400, retries: 2, backoffMs: 20 };

describe('the StarLab protocol client', () => {
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await startProtocolServer();
  });
  afterAll(() => server.stop());
  afterEach(() => server.setMode('ok'));

  it('plays FrozenLake over the protocol exactly as the built-in, and closes its sessions', async () => {
    const { definition, dispose } = await connectServedEnvironment('lake', { url: server.url, protocol: 'starlab' }, FAST);
    try {
      expect(definition.served).toMatchObject({ protocol: 'starlab', fork: true, observationTokens: 4 * 4 + 3 });
      expect(definition.served.digest).toBe(manifestDigest(readManifest('lake', { actions: ['Up', 'Down', 'Left', 'Right'], vocabulary: new FrozenLakeEnv().vocabulary.filter((w) => w !== '\n'), expert: true })));
      const remote = definition.create({});
      const local = new FrozenLakeEnv();
      expect(await remote.reset(11)).toBe(local.reset(11));
      for (const action of ['right', 'Down', 'Fly', 'Left', 'Up', 'Down']) {
        const [a, b] = [await remote.step(action), local.step(action)];
        expect([a.observation, a.reward, a.done, a.info.success, a.info.actionValid]).toEqual([b.observation, b.reward, b.done, b.info.success, b.info.actionValid]);
        if (b.done) break;
      }
      const copy = await remote.clone();
      expect(copy.render()).toBe(remote.render());
      await copy.close?.();
      const fresh = definition.create({});
      await fresh.reset(11);
      // The server's expert is the built-in's shortest path.
      local.reset(11);
      expect(await definition.expert!(fresh)).toEqual(frozenLakeExpert(local));
      await fresh.close?.();
      await remote.close?.();
      expect((await server.counts()).open).toBe(0);
    } finally {
      dispose();
    }
  });

  it('says a server offers no fork when /fork is a 404', async () => {
    const noFork = await startProtocolServer({ fork: false });
    try {
      const { definition, dispose } = await connectServedEnvironment('lake', { url: noFork.url, protocol: 'starlab' }, FAST);
      dispose();
      expect(definition.served.fork).toBe(false);
    } finally {
      await noFork.stop();
    }
  });

  it('encodes any observation in the open vocabulary: words first, then characters, then UTF-8 bytes', () => {
    const tokenizer = new Tokenizer(['door', 'key', ...CHARACTER_TOKENS], ['open']);
    const ids = tokenizer.encode('open door → käse!');
    expect(ids).not.toContain(tokenizer.id(SPECIAL_TOKENS.unk));
    // open, door, the arrow's 3 UTF-8 bytes, k, ä's 2 bytes, s, e, !
    expect(ids.map((id) => tokenizer.tokens[id])).toEqual(['open', 'door', '<0xE2>', '<0x86>', '<0x92>', 'k', '<0xC3>', '<0xA4>', 's', 'e', '!']);
  });

  describe('refuses what a server answers badly, naming the environment and the request', () => {
    const failure = async (run: (env: RemoteEnv) => Promise<unknown>): Promise<EnvServerError> => {
      const sessions = await openSessions('lake', { url: server.url, protocol: 'starlab' }, FAST);
      const env = new RemoteEnv(sessions);
      await env.reset(3);
      try {
        await run(env);
      } catch (error) {
        return error as EnvServerError;
      } finally {
        sessions.dispose();
      }
      throw new Error('no failure');
    };

    it.each([
      ['garbage', 'malformed', /environment 'lake': POST \/step \(action Up\) was answered badly: the answer is not JSON/],
      ['missing', 'malformed', /POST \/step \(action Up\) was answered badly: "observation" must be a string, got nothing/],
      ['foreign', 'malformed', /"actions" names "Fly", which is not in the manifest's action set/],
      ['oversize', 'malformed', /"observation" is 20000 characters long; the bound is 16384/],
      ['503', 'unavailable', /environment 'lake': POST \/step \(action Up\) failed: HTTP 503 \(3 tries\)/],
      ['hang', 'unavailable', /POST \/step \(action Up\) failed: no answer within 400 ms \(3 tries\)/],
    ] as const)('%s', async (mode, kind, message) => {
      const started = Date.now();
      const error = await failure(async (env) => {
        await server.setMode(mode);
        await env.step('Up');
      });
      expect(error).toBeInstanceOf(EnvServerError);
      expect([error.environment, error.request, error.failure]).toEqual(['lake', 'POST /step (action Up)', kind]);
      expect(error.message).toMatch(message);
      // Bounded: 3 tries of at most 400 ms and backoffs of 20 + 40 ms.
      expect(Date.now() - started).toBeLessThan(3 * 400 + 60 + 1000);
    });

    it('a manifest of thousands of actions', async () => {
      await server.setMode('thousands');
      await expect(openSessions('lake', { url: server.url, protocol: 'starlab' }, FAST)).rejects.toThrow(/environment 'lake': GET \/manifest was answered badly: "actions" has 5000 entries; the bound is 256/);
    });

    it('a refused connection, retried with backoff until the bound', async () => {
      const transport = new EnvHttpTransport('gone', 'http://127.0.0.1:9', FAST);
      await expect(transport.request('POST', '/reset', { seed: 1 }, 'POST /reset (seed 1)')).rejects.toThrow(/environment 'gone': POST \/reset \(seed 1\) failed: ECONNREFUSED 127.0.0.1:9 \(3 tries\)/);
      transport.dispose();
    });
  });

  it('recovers when the server answers again within the retry bound', async () => {
    const sessions = await openSessions('lake', { url: server.url, protocol: 'starlab' }, { timeoutMs: 2000, retries: 4, backoffMs: 100 });
    await server.setMode('503');
    const healed = new Promise((resolve) => setTimeout(resolve, 150)).then(() => server.setMode('ok'));
    const answer = await sessions.reset(5);
    await healed;
    expect(answer.observation).toBe(new FrozenLakeEnv().reset(5));
    sessions.dispose();
  });
});

/** `starlab env check <url>` against a real server process, healthy and then answering badly. */
import { checkEnvironmentServer } from '../../src/cli/client/env-check';
import { ProtocolServer, startProtocolServer } from '../support/protocol-server';

describe('starlab env check', () => {
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await startProtocolServer();
  });
  afterAll(() => server.stop());

  const check = async (url: string) => {
    const lines: string[] = [];
    const status = await checkEnvironmentServer(url, { out: (text) => lines.push(text), err: (text) => lines.push(text) }, { timeoutMs: 500 });
    return { status, text: lines.join('\n') };
  };

  it('passes a server that follows the protocol, fork and expert included', async () => {
    const { status, text } = await check(server.url);
    expect(status).toBe(0);
    expect(text).toMatch(/✓ seed 0: reset and \d+ steps answer the same twice/);
    expect(text).toMatch(/✓ fork: offered/);
    expect(text).toMatch(/✓ expert: a plan of \d+ actions/);
    expect(text).toMatch(/the server follows the protocol$/);
  });

  it.each([
    ['garbage', /✗ manifest: GET \/manifest was answered badly: the answer is not JSON/],
    ['missing', /✗ seed 0: POST \/step \(action Up\) was answered badly: "observation" must be a string, got nothing/],
    ['thousands', /✗ manifest: GET \/manifest was answered badly: "actions" has 5000 entries; the bound is 256/],
  ] as const)('fails a server that answers %s, saying what is wrong', async (mode, message) => {
    await server.setMode(mode);
    try {
      const { status, text } = await check(server.url);
      expect(status).toBe(1);
      expect(text).toMatch(message);
    } finally {
      await server.setMode('ok');
    }
  });

  it('fails a server that is not there', async () => {
    const { status, text } = await check('http://127.0.0.1:9');
    expect([status, text]).toEqual([1, '✗ manifest: GET /manifest failed: ECONNREFUSED 127.0.0.1:9 (1 try)']);
  });
});

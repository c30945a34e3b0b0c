/** `npm run train` on an environment served over the StarLab protocol by another process. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVAL_METRICS } from '../../src/training/signals/step-metrics';
import { ProtocolServer, startProtocolServer } from '../support/protocol-server';
import { TYPESCRIPT_LOADER as REGISTER } from '../../src/repositories/typescript-child';

const ROOT = join(__dirname, '..', '..');
const run = (args: string[]) =>
  spawnSync(process.execPath, ['-r', REGISTER, join(ROOT, 'src', 'cli', 'train.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });

describe('npm run train on a served environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'starlab-served-'));
  let server: ProtocolServer;
  beforeAll(async () => {
    server = await startProtocolServer({ config: { slippery: false } });
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const specWith = (environment: unknown, extra: Record<string, unknown> = {}) => {
    const path = join(dir, `spec-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify({ environment, algorithm: { id: 'starpo-s' }, ...extra }));
    return path;
  };

  it('trains on {"id": "http", "config": {"url"}} and closes every session it opened', async () => {
    const out = join(dir, 'metrics.jsonl');
    const spec = specWith({ id: 'http', config: { url: server.url } }, { rollout: { groups: 2, groupSize: 4 }, training: { steps: 2, evalEvery: 1, evalEpisodes: 8, warmup: { steps: 3 } } });
    const result = run(['--spec', spec, '--metrics-out', out, '--backend', 'wasm']);
    expect(result.stderr).toMatch(/http-starpo-s: http \/ starpo-s, .*warm-up demonstrations 3 steps/);
    expect(result.status).toBe(0);
    const steps = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { step: number; metrics?: Record<string, number> });
    expect(steps.filter((s) => s.metrics).map((s) => s.step)).toEqual([0, 1, 2]);
    expect(steps.every((s) => !s.metrics || typeof s.metrics[EVAL_METRICS.sampled.success] === 'number')).toBe(true);
    const counts = await server.counts();
    expect(counts.open).toBe(0);
    expect(counts['/reset']).toBeGreaterThan(0);
  }, 300_000);

  it('fails with the environment and the request when the server is killed mid-training, without hanging', async () => {
    const doomed = await startProtocolServer();
    const out = join(dir, 'killed.jsonl');
    const spec = specWith({ id: 'http', config: { url: doomed.url } }, { rollout: { groups: 2, groupSize: 4 }, training: { steps: 50, evalEvery: 0, evalEpisodes: 8, warmup: { steps: 2 } } });
    const child = spawn(process.execPath, ['-r', REGISTER, join(ROOT, 'src', 'cli', 'train.ts'), '--spec', spec, '--metrics-out', out, '--backend', 'wasm'], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      // Killed once the first RL step is in, so the next rollout finds nobody.
      while (!/\[#/.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 100));
      await doomed.stop();
      const killedAt = Date.now();
      expect(await exited).toBe(1);
      expect(stderr).toMatch(/training failed: environment 'http': POST \/(reset|step|close)[^\n]* failed: ECONNREFUSED 127\.0\.0\.1:\d+ \(4 tries\)/);
      expect(stderr).not.toMatch(/ {4}at /);
      // Three backoffs of 200, 400 and 800 ms, and no more.
      expect(Date.now() - killedAt).toBeLessThan(20_000);
    } finally {
      child.kill('SIGKILL');
      await doomed.stop();
    }
  }, 300_000);

  it('exits 2 naming the field of a bad address, and saying why for a server that is not there', () => {
    const bad = run(['--spec', specWith({ id: 'http', config: { url: 'ftp://x' } })]);
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringContaining('environment.config.url: must be an absolute http:// or https:// URL')]);
    const gone = run(['--spec', specWith({ id: 'http', config: { url: 'http://127.0.0.1:9' } })]);
    expect(gone.status).toBe(2);
    expect(gone.stderr).toMatch(/cannot train on the environment server: environment 'http': GET \/manifest failed: ECONNREFUSED 127\.0\.0\.1:9 \(4 tries\)/);
  }, 120_000);
});

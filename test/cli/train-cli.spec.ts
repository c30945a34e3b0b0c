import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TYPESCRIPT_LOADER as REGISTER } from '../../src/repositories/typescript-child';

const ROOT = join(__dirname, '..', '..');
const run = (args: string[]) =>
  spawnSync(process.execPath, ['-r', REGISTER, join(ROOT, 'src', 'cli', 'train.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });

/** `npm run train`: the trainer on its own, with a progress bar and JSONL output. */
describe('npm run train', () => {
  const dir = mkdtempSync(join(tmpdir(), 'starlab-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 2 naming each bad field of an invalid spec', () => {
    const spec = join(dir, 'bad.json');
    writeFileSync(spec, JSON.stringify({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { groups: 0 }, speed: 'fast' }));
    const result = run(['--spec', spec]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('rollout.groups: must be >= 1');
    expect(result.stderr).toContain('speed: is not a known field');
    expect(run(['--spec', join(dir, 'missing.json')]).status).toBe(2);
    expect(run([]).stderr).toContain('--spec is required');
  });

  it('lists the presets and lets --algorithm replace the spec’s preset, checked like the spec', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stderr).toMatch(/presets: starpo-ppo, .*dapo, gigpo/);
    const spec = join(dir, 'preset.json');
    writeFileSync(spec, JSON.stringify({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s', config: { clipMode: 'aepo' } }, rollout: { groups: 0 } }));
    const result = run(['--spec', spec, '--algorithm', 'reinforce']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/algorithm\.id: must be one of .*dapo, gigpo/);
  });

  it('trains and writes one JSON line per step (metrics) and per step with warnings', () => {
    const spec = join(dir, 'tiny.json');
    const out = join(dir, 'metrics.jsonl');
    writeFileSync(
      spec,
      JSON.stringify({
        environment: { id: 'bandit' },
        algorithm: { id: 'starpo-s-grpo' },
        model: { config: { layers: 1, dModel: 16, contextLength: 40 } },
        rollout: { groups: 2, groupSize: 4, maxTokensPerTurn: 12 },
        training: { steps: 8, evalEvery: 4, evalEpisodes: 8, warmup: { steps: 3, batchSize: 8 } },
        // A rule that fires for certain at step 6 so the warning lines are exercised.
        collapse: { rules: [{ detector: 'grad_norm_spike', threshold: 0, warmupSteps: 5 }] },
      }),
    );
    const result = run(['--spec', spec, '--metrics-out', out, '--backend', 'wasm']);
    expect(result.status).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const metricLines = lines.filter((l) => l.metrics);
    expect(metricLines.map((l) => l.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(metricLines[4].metrics).toEqual(expect.objectContaining({ 'reward/mean': expect.any(Number), 'eval/sampled/success': expect.any(Number) }));
    expect(lines.filter((l) => l.warnings).map((l) => [l.step, l.warnings[0].detector])).toEqual([[6, 'grad_norm_spike']]);
    expect(result.stderr).toMatch(/step 6 critical grad_norm_spike/);
    expect(result.stderr).toMatch(/done: 8 steps; eval success after warm-up/);
  });

  it('--algorithm replaces the spec\'s preset: a tree-rollout run on FrozenLake', () => {
    const spec = join(dir, 'lake.json');
    const out = join(dir, 'lake.jsonl');
    writeFileSync(
      spec,
      JSON.stringify({
        environment: { id: 'frozenlake' },
        algorithm: { id: 'starpo-grpo' },
        model: { config: { layers: 1, dModel: 16 } },
        rollout: { groups: 2, groupSize: 4, maxTurns: 3, maxTokensPerTurn: 16 },
        training: { steps: 2, evalEvery: 0, evalEpisodes: 4, warmup: { steps: 3, batchSize: 8 } },
      }),
    );
    expect(run(['--help']).stderr).toContain('arpo, aepo');
    const result = run(['--spec', spec, '--algorithm', 'aepo', '--metrics-out', out, '--backend', 'wasm']);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('frozenlake / aepo');
    const steps = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.metrics && l.step > 0);
    expect(steps[0].metrics).toEqual(expect.objectContaining({ 'rollout/branches_per_prompt': expect.any(Number), 'rollout/consecutive_branches_1': expect.any(Number) }));
    expect(run(['--spec', spec, '--algorithm', 'nope']).stderr).toContain('algorithm.id');
  });
});

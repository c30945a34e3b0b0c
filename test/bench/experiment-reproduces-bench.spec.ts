import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AlgorithmResult } from '../../bench/algorithms';
import { COLUMNS, ROWS, keyId, runKey, specOf } from '../../bench/algorithms-table';
import { outcomeOf, readResults } from '../../bench/runs';
import { formatCell, summariseCell } from '../../src/training/experiment/cells';
import { EVAL_METRICS } from '../../src/training/signals/step-metrics';
import { TestStack } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const row = ROWS.find((r) => r.name === 'frozenlake')!;
const PRESETS = ['starpo-grpo', 'starpo-s'];
const SEEDS = [1, 2, 3];

/**
 * The figure behind the README's claim that an experiment and the benches are one computation:
 * an experiment of 2 presets × 3 seeds on non-slippery FrozenLake, submitted through the API,
 * has jobs with the digests of bench/algorithms' stored runs; fed those runs' evaluations as its
 * jobs' step metrics (no training here), its table has their cells, as docs/results.md prints
 * them, and the same random agent and optimum.
 */
describe('an experiment reproduces the stored bench cells (real HTTP, no worker)', () => {
  const stack = new TestStack();
  const stored = readResults<AlgorithmResult>(join(ROOT, 'bench/results/algorithms.jsonl'));
  const runOf = (preset: string, seed: number) => {
    const key = runKey(row, COLUMNS.find((c) => c.name === preset)!, seed);
    // The newest run with the key: a run stored before a default changed stays in the file, stale.
    return { key, id: keyId(key), result: stored.filter((r) => JSON.stringify(r.key) === JSON.stringify(key)).at(-1) };
  };

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('has the bench runs’ digests and, fed their evaluations, their cells', async () => {
    const { name: _name, ...base } = specOf(runOf('starpo-s', 1).key);
    const submitted = await stack.request('POST', '/v1/experiments', { body: { name: 'reproduce', base, grid: { 'algorithm.id': PRESETS, 'training.seed': SEEDS } } });
    expect(submitted.status).toBe(201);
    const cells = submitted.body.cells;
    expect(cells.map((c: any) => c.label)).toEqual(PRESETS.map((p) => `algorithm.id=${p}`));

    for (const [i, preset] of PRESETS.entries()) {
      for (const [j, seed] of SEEDS.entries()) {
        const { id, result } = runOf(preset, seed);
        const run = cells[i].runs[j];
        // The job trains exactly what the bench trained: its digest is the stored run's.
        expect([preset, seed, run.digest]).toEqual([preset, seed, id.split('#')[1]]);
        expect(result?.id).toBe(id); // stale if a default changed since: rerun `npm run bench:algorithms -- --rows frozenlake`
        // The stored run's evaluations, as a worker would have written them.
        await stack.prisma.stepMetric.createMany({ data: Object.entries(result!.curve).map(([step, value]) => ({ jobId: run.jobId, step: Number(step), metrics: { [EVAL_METRICS.sampled.success]: value } })) });
        await stack.prisma.job.update({ where: { id: run.jobId }, data: { status: 'succeeded', currentStep: row.steps, progress: 1, finishedAt: new Date() } });
      }
    }

    const deadline = Date.now() + 60_000;
    let experiment = (await stack.request('GET', `/v1/experiments/${submitted.body.id}`)).body;
    while (experiment.references !== 'ready' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      experiment = (await stack.request('GET', `/v1/experiments/${submitted.body.id}`)).body;
    }
    expect([experiment.status, experiment.references]).toEqual(['succeeded', 'ready']);
    const results = readFileSync(join(ROOT, 'docs/results.md'), 'utf8');
    for (const [i, preset] of PRESETS.entries()) {
      const runs = SEEDS.map((seed) => runOf(preset, seed).result!);
      const cell = experiment.cells[i];
      const bench = summariseCell(runs.map(outcomeOf));
      expect({ afterWarmup: cell.afterWarmup, afterRl: cell.afterRl, finished: cell.finished }).toEqual({ afterWarmup: bench.afterWarmup, afterRl: bench.afterRl, finished: 3 });
      // The cell as docs/results.md prints it, e.g. "61.7 → 66.5 (52.3–73.8, 3 seeds)".
      expect(cell.table).toBe(formatCell(bench));
      expect(results.includes(cell.table)).toBe(true);
      // The references on the same evaluation seeds as the stored runs'.
      expect([cell.random, cell.optimal]).toEqual([runs[0].random, runs[0].optimal]);
    }
  }, 120_000);
});

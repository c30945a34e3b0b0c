import { parseJobSpec } from '../spec/validate';
import { SpecValidationError } from '../spec/errors';
import { expertSuccess } from './baselines';
import { band, formatCell, summariseCell } from './cells';
import { specDigest } from './digest';
import { MAX_EXPERIMENT_RUNS, expandGrid, gridSize, withValueAt } from './grid';

const BASE = { environment: { id: 'frozenlake', config: { slippery: false } }, algorithm: { id: 'starpo-s' }, training: { steps: 2 } };

describe('expandGrid', () => {
  it('makes one run per point and one cell per point without the seed, the last axis varying fastest', () => {
    const { cells, runs } = expandGrid(BASE, { 'algorithm.id': ['starpo-grpo', 'starpo-s'], 'training.seed': [1, 2, 3] }, 'sweep');
    expect(cells.map((c) => c.label)).toEqual(['algorithm.id=starpo-grpo', 'algorithm.id=starpo-s']);
    expect(runs.map((r) => [r.cell, r.seed])).toEqual([[0, 1], [0, 2], [0, 3], [1, 1], [1, 2], [1, 3]]);
    expect(runs[4].spec).toEqual({ ...BASE, name: 'sweep-c2-s2', algorithm: { id: 'starpo-s' }, training: { steps: 2, seed: 2 } });
    // The base is never changed by a run.
    expect(BASE.training).toEqual({ steps: 2 });
  });

  it('sets whole sections and nested values, and keeps the base seed when there is no seeds axis', () => {
    const { cells, runs } = expandGrid({ ...BASE, training: { steps: 2, seed: 7 } }, { 'environment.config': [{ slippery: true }, { slippery: false, size: 5 }], 'training.learningRate': [0.001] }, 'env');
    expect(cells).toHaveLength(2);
    expect(runs.map((r) => r.seed)).toEqual([7, 7]);
    expect(runs[1].spec.environment).toEqual({ id: 'frozenlake', config: { slippery: false, size: 5 } });
    expect(withValueAt({}, 'a.b.c', 1)).toEqual({ a: { b: { c: 1 } } });
  });

  it('refuses the whole grid, naming the path and the run, when any run is invalid', () => {
    const refused = (grid: Record<string, unknown[]>) => {
      try {
        expandGrid(BASE, grid, 'x');
      } catch (error) {
        return (error as SpecValidationError).errors;
      }
      throw new Error('accepted');
    };
    expect(refused({ 'training.learningRate': [0.001, 5] })).toEqual([{ field: 'grid.training.learningRate', message: expect.stringMatching(/<= 0\.1 in run 2 \(training\.learningRate=5, training\.seed=1\)/) }]);
    expect(refused({ 'name': ['a'] })[0]).toEqual({ field: 'grid.name', message: expect.stringMatching(/is not a spec path/) });
    expect(refused({ 'training.seed': [1, 1] })[0]).toEqual({ field: 'grid.training.seed', message: 'lists a value twice' });
    expect(refused({ 'training': [{}], 'training.seed': [1] })[0]).toEqual({ field: 'grid.training.seed', message: 'lies inside another axis of the grid' });
    // 5 × 13 = 65 runs, one over the bound: refused before any spec is built.
    const big = { 'training.seed': Array.from({ length: 5 }, (_, i) => i), 'training.learningRate': Array.from({ length: 13 }, (_, i) => 0.001 * (i + 1)) };
    expect(gridSize(big)).toBe(MAX_EXPERIMENT_RUNS + 1);
    expect(refused(big)).toEqual([{ field: 'grid', message: `makes 65 runs; an experiment has at most ${MAX_EXPERIMENT_RUNS}` }]);
  });
});

describe('specDigest', () => {
  it('is the same for a spec and its resolved, stored form, and ignores name, labels, priority and device', () => {
    const resolved = parseJobSpec(BASE);
    expect(specDigest(resolved)).toBe(specDigest(BASE));
    expect(specDigest({ ...BASE, name: 'other', labels: { project: 'x' }, priority: 5, device: 'cpu' })).toBe(specDigest(BASE));
    expect(specDigest({ ...BASE, training: { steps: 3 } })).not.toBe(specDigest(BASE));
    expect(specDigest(BASE)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('leaves out the warm-up curriculum while it is off, config and all, and counts it once on', () => {
    const withCurriculum = (curriculumShare: number) => ({ ...BASE, training: { steps: 2, warmup: { curriculumShare, curriculumConfig: { size: 3 } } } });
    expect(specDigest(withCurriculum(0))).toBe(specDigest(BASE));
    expect(specDigest(withCurriculum(0.5))).not.toBe(specDigest(BASE));
  });

  it("leaves out the RL steps' curriculum while it is off, config and all", () => {
    const withCurriculum = (curriculumShare: number) => ({ ...BASE, training: { steps: 2, curriculumShare, curriculumConfig: { size: 3 } } });
    expect(specDigest(withCurriculum(0))).toBe(specDigest(BASE));
    expect(specDigest(withCurriculum(0.5))).not.toBe(specDigest(BASE));
  });
});

describe('cells', () => {
  it('takes the mean and the min–max over the seeds that finished', () => {
    const cell = summariseCell([
      { seed: 1, afterWarmup: 0.5, afterRl: 0.75 },
      { seed: 2, afterWarmup: 0.25, afterRl: 0.5 },
      { seed: 3, afterWarmup: 0.75, afterRl: null },
    ]);
    expect(cell.seeds).toBe(2);
    expect(cell.afterWarmup).toEqual({ mean: (0.5 + 0.25 + 0.75) / 3, min: 0.25, max: 0.75 });
    expect(cell.afterRl).toEqual({ mean: (0.75 + 0.5) / 2, min: 0.5, max: 0.75 });
    expect(formatCell(cell)).toBe('50.0 → 62.5 (50.0–75.0, 2 seeds)');
    expect(formatCell(summariseCell([{ seed: 1, afterWarmup: 0.2, afterRl: 0.4 }]))).toBe('20.0 → 40.0');
    expect(formatCell(summariseCell([{ seed: 1, afterWarmup: 0.2, afterRl: null }]))).toBe('…');
  });

  it('bands curves over the seeds that have each step', () => {
    expect(band([{ 0: 0.2, 10: 0.4 }, { 0: 0.4, 10: 0.8, 20: 1 }])).toEqual([
      { step: 0, mean: (0.2 + 0.4) / 2, min: 0.2, max: 0.4, n: 2 },
      { step: 10, mean: (0.4 + 0.8) / 2, min: 0.4, max: 0.8, n: 2 },
      { step: 20, mean: 1, min: 1, max: 1, n: 1 },
    ]);
  });
});

describe('expertSuccess', () => {
  it('solves every non-slippery FrozenLake map within the budget, and is null without an expert', async () => {
    expect(await expertSuccess(parseJobSpec({ ...BASE, training: { evalEpisodes: 16 } }))).toBe(1);
    expect(await expertSuccess(parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' } }))).toBeNull();
  });
});

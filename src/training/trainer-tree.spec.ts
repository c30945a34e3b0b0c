import { useTestBackend } from '../../test/support/tf';
import type { TrajectoryRecord } from './records';
import type { CollapseWarning } from './signals/collapse';
import type { Metrics } from './signals/step-metrics';
import { parseJobSpec } from './spec/validate';
import { Trainer } from './trainer';

/** A tree-rollout job small enough for a few real steps: slippery FrozenLake, 2 groups of 4. */
const treeSpec = (algorithm: 'arpo' | 'aepo', training: Record<string, unknown> = {}) =>
  parseJobSpec({
    environment: { id: 'frozenlake', config: { slippery: true } },
    algorithm: { id: algorithm, config: { miniBatchSize: 4 } },
    model: { config: { layers: 1, dModel: 16, heads: 2 } },
    rollout: { groups: 2, groupSize: 4, maxTurns: 3, maxTokensPerTurn: 16, historyTurns: 2 },
    training: { steps: 4, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 2, warmup: { steps: 3, batchSize: 8 }, ...training },
  });

function deterministic(metrics: Metrics): Metrics {
  return Object.fromEntries(Object.entries(metrics).filter(([name]) => !name.startsWith('perf/') && name !== 'warmup/ms'));
}

async function collect(trainer: Trainer, stopAfter?: number) {
  const steps = new Map<number, Metrics>();
  const records = new Map<number, TrajectoryRecord[]>();
  const checkpoints = new Map<number, Uint8Array>();
  const warnings: CollapseWarning[] = [];
  await trainer.run({
    onStep: (step, metrics) => void steps.set(step, deterministic(metrics)),
    onTrajectories: (step, rows) => void records.set(step, rows),
    onWarnings: (_step, fired) => void warnings.push(...fired),
    onCheckpoint: (step, bytes) => void checkpoints.set(step, bytes),
    shouldStop: () => stopAfter !== undefined && trainer.step >= stopAfter,
  });
  return { steps, records, checkpoints, warnings };
}

describe('Trainer with tree rollouts', () => {
  beforeAll(useTestBackend);

  it.each(['arpo', 'aepo'] as const)('%s: k trajectories per group, the branching metrics, the collapse monitor on its defaults', async (algorithm) => {
    const spec = treeSpec(algorithm);
    expect(spec.algorithm.config.rollout).toBe(algorithm);
    const trainer = await Trainer.create(spec);
    const run = await collect(trainer);
    trainer.dispose();
    expect([...run.steps.keys()]).toEqual([0, 1, 2, 3, 4]);
    for (const step of [1, 2, 3, 4]) {
      const records = run.records.get(step)!;
      expect([0, 1].map((g) => records.filter((r) => r.group === g).map((r) => r.sample))).toEqual([
        [0, 1, 2, 3],
        [0, 1, 2, 3],
      ]);
      const metrics = run.steps.get(step)!;
      // Runs of l = 1..min(maxTurns, k − 1) = 1..3 consecutive branching rounds.
      for (const name of ['rollout/branches_per_prompt', 'rollout/global_samples', 'entropy/after_feedback', 'diversity/distinct_action_sequences', ...[1, 2, 3].map((l) => `rollout/consecutive_branches_${l}`)]) {
        expect(Number.isFinite(metrics[name])).toBe(true);
      }
      expect(metrics['rollout/global_samples'] + metrics['rollout/branches_per_prompt']).toBeLessThanOrEqual(4);
      expect(metrics['diversity/distinct_action_sequences']).toBeGreaterThanOrEqual(1);
      expect(metrics['diversity/distinct_action_sequences']).toBeLessThanOrEqual(4);
      expect(Number.isFinite(metrics['loss/policy'])).toBe(true);
    }
    // The trees did branch.
    expect([1, 2, 3, 4].reduce((n, step) => n + run.steps.get(step)!['rollout/branches_per_prompt'], 0)).toBeGreaterThan(0);
    // The monitor ran on its defaults and this short, healthy run raised nothing above info.
    expect(run.warnings.filter((w) => w.severity !== 'info')).toEqual([]);
  }, 120_000);

  it('aepo resumes from a checkpoint with exactly the metrics of the uninterrupted run', async () => {
    const straight = await Trainer.create(treeSpec('aepo'));
    const full = await collect(straight);
    straight.dispose();
    const first = await Trainer.create(treeSpec('aepo'));
    const interrupted = await collect(first, 2);
    first.dispose();
    const resumed = await Trainer.create(treeSpec('aepo'), { resumeFrom: interrupted.checkpoints.get(2)! });
    const rest = await collect(resumed);
    resumed.dispose();
    for (const step of [3, 4]) expect(rest.steps.get(step)).toEqual(full.steps.get(step));
  }, 120_000);
});

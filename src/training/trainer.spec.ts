import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { loadPolicyFromCheckpoint } from './checkpoint';
import type { Metrics } from './signals/step-metrics';
import { parseJobSpec } from './spec/validate';
import { learningRateScale } from './policy/lr-schedule';
import { Trainer } from './trainer';

/** A job small enough to run a handful of real steps in seconds: critic, reference and KL all on. */
const tinySpec = (overrides: Record<string, unknown> = {}) =>
  parseJobSpec({
    environment: { id: 'frozenlake', config: { slippery: true } },
    algorithm: { id: 'starpo-ppo', config: { miniBatchSize: 4, klCoef: 0.001 } },
    model: { config: { layers: 1, dModel: 16, heads: 2 } },
    rollout: { groups: 2, groupSize: 4, maxTurns: 2, maxTokensPerTurn: 16, historyTurns: 1 },
    training: { steps: 6, evalEvery: 3, evalEpisodes: 8, checkpointEvery: 3, warmup: { steps: 5, batchSize: 16 } },
    ...overrides,
  });

/** Everything but wall-clock timings, which legitimately differ between runs. */
function deterministic(metrics: Metrics): Metrics {
  return Object.fromEntries(Object.entries(metrics).filter(([name]) => !name.startsWith('perf/') && name !== 'warmup/ms'));
}

async function collect(trainer: Trainer, stopAfter?: number) {
  const steps = new Map<number, Metrics>();
  const checkpoints = new Map<number, Uint8Array>();
  const warnings: unknown[] = [];
  const result = await trainer.run({
    onStep: (step, metrics) => void steps.set(step, deterministic(metrics)),
    onWarnings: (_step, fired) => void warnings.push(...fired),
    onCheckpoint: (step, bytes) => void checkpoints.set(step, bytes),
    shouldStop: () => stopAfter !== undefined && trainer.step >= stopAfter,
  });
  return { steps, checkpoints, result, warnings };
}

describe('Trainer', () => {
  beforeAll(useTestBackend);

  it('resumes from a checkpoint with exactly the metrics of the uninterrupted run', async () => {
    const straight = await Trainer.create(tinySpec());
    const full = await collect(straight);
    straight.dispose();
    expect(full.result).toEqual({ status: 'completed', step: 6 });
    expect([...full.steps.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6]);

    const first = await Trainer.create(tinySpec());
    const interrupted = await collect(first, 3);
    first.dispose();
    expect(interrupted.result).toEqual({ status: 'stopped', step: 3 });
    const bytes = interrupted.checkpoints.get(3)!;
    expect(bytes).toBeDefined();

    const resumed = await Trainer.create(tinySpec(), { resumeFrom: bytes });
    expect(resumed.step).toBe(3);
    const rest = await collect(resumed);
    resumed.dispose();
    expect([...rest.steps.keys()]).toEqual([4, 5, 6]);
    for (const step of [4, 5, 6]) expect(rest.steps.get(step)).toEqual(full.steps.get(step));
    for (const step of [1, 2, 3]) expect(interrupted.steps.get(step)).toEqual(full.steps.get(step));
    expect(full.steps.get(6)!['kl/ref']).toBeDefined();
    expect(full.steps.get(6)!['loss/value']).toBeDefined();
  }, 120_000);

  it('self-imitation: replays its successes and resumes with its buffer and optimiser exactly', async () => {
    const spec = () =>
      tinySpec({
        environment: { id: 'bandit' },
        algorithm: { id: 'starpo-s', config: { miniBatchSize: 4, selfImitationSteps: 1, selfImitationBatchSize: 4, selfImitationBufferSize: 6 } },
        // Enough warm-up for well-formed answers, so that some episodes succeed.
        training: { steps: 5, evalEvery: 0, evalEpisodes: 8, checkpointEvery: 2, warmup: { steps: 60, batchSize: 16, learningRate: 0.01 } },
      });
    const straight = await Trainer.create(spec());
    const full = await collect(straight);
    straight.dispose();
    const added = [1, 2, 3, 4, 5].map((step) => full.steps.get(step)!['self_imitation/added']);
    expect(added.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // FIFO at capacity 6: the buffer holds what was added, up to 6.
    let held = 0;
    for (const [i, n] of added.entries()) {
      held = Math.min(6, held + n);
      expect(full.steps.get(i + 1)!['self_imitation/buffer']).toBe(held);
    }
    expect(full.steps.get(5)!['self_imitation/loss']).toBeGreaterThan(0);

    const first = await Trainer.create(spec());
    const interrupted = await collect(first, 2);
    first.dispose();
    const resumed = await Trainer.create(spec(), { resumeFrom: interrupted.checkpoints.get(2)! });
    const rest = await collect(resumed);
    resumed.dispose();
    for (const step of [3, 4, 5]) expect(rest.steps.get(step)).toEqual(full.steps.get(step));
  }, 120_000);

  it('reports every canonical metric of this stage and keeps the tensor count flat across steps', async () => {
    const trainer = await Trainer.create(tinySpec({ training: { steps: 8, evalEvery: 4, evalEpisodes: 4, checkpointEvery: 0, warmup: { steps: 3, batchSize: 8 } } }));
    const counts: number[] = [];
    const seen = new Set<string>();
    const order: string[] = [];
    await trainer.run({
      onRolloutEnd: (step, trajectories, ms) => void order.push(`rollout ${step}: ${trajectories}${ms >= 0 ? '' : ' (negative time)'}`),
      onStep: (step, metrics) => {
        order.push(`step ${step}`);
        Object.keys(metrics).forEach((name) => seen.add(name));
        if (step >= 2) counts.push(tf.memory().numTensors);
      },
    });
    expect(new Set(counts).size).toBe(1);
    // Each step announces its rollout (2 groups × 4 trajectories) before it reports; the warm-up (step 0) has none.
    expect(order.slice(0, 5)).toEqual(['step 0', 'rollout 1: 8', 'step 1', 'rollout 2: 8', 'step 2']);
    for (const name of [
      'reward/mean', 'reward/std_in_group', 'reward/std_in_group_kept', 'success/rate', 'success/pass_at_k',
      'entropy/mean', 'grad_norm/actor', 'grad_norm/critic', 'response/length', 'response/think_length',
      'diversity/distinct_ratio', 'diversity/identical_groups', 'loss/policy', 'loss/value', 'clip/fraction_high',
      'clip/fraction_low', 'kl/ref', 'kl/update', 'kl/minibatch', 'update/optimiser_steps', 'filter/kept_ratio',
      'eval/sampled/success', 'perf/tokens_per_s', 'perf/step_ms',
    ]) {
      expect(seen).toContain(name);
    }
    const bytes = trainer.checkpointBytes();
    trainer.dispose();
    const { model, tokenizer, step } = loadPolicyFromCheckpoint(bytes);
    expect(step).toBe(8);
    expect(model.config.vocabSize).toBe(tokenizer.size);
    model.dispose();
  }, 120_000);
});

describe('the DAPO and GiGPO presets', () => {
  beforeAll(useTestBackend);

  it('dapo: dynamic sampling draws more batches while groups tie, within its bound, and says what it drew', async () => {
    // Bandit groups of two after a format warm-up: some tie (all pick the low arm), some do not.
    const spec = (maxBatches: number) =>
      parseJobSpec({
        environment: { id: 'bandit' },
        algorithm: { id: 'dapo', config: { dynamicSamplingMaxBatches: maxBatches } },
        model: { config: { layers: 1, dModel: 16, contextLength: 40 } },
        rollout: { groups: 3, groupSize: 2, maxTokensPerTurn: 12 },
        training: { steps: 3, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 0, warmup: { steps: 60, batchSize: 16 } },
      });
    for (const maxBatches of [1, 4]) {
      const trainer = await Trainer.create(spec(maxBatches));
      const { steps } = await collect(trainer);
      trainer.dispose();
      for (const step of [1, 2, 3]) {
        const m = steps.get(step)!;
        const rounds = m['rollout/dynamic_sampling_rounds'];
        expect(rounds).toBeGreaterThanOrEqual(0);
        expect(rounds).toBeLessThanOrEqual(maxBatches - 1);
        expect(m['rollout/extra_groups']).toBe(rounds * 3);
        expect(m['rollout/extra_trajectories']).toBe(rounds * 3 * 2);
        // Kept groups: what was drawn times the kept ratio, never more than rollout.groups.
        const kept = Math.round(m['filter/kept_ratio'] * (3 + m['rollout/extra_groups']));
        expect(kept).toBe(3 - m['rollout/dynamic_sampling_shortfall']);
        // A step stops drawing as soon as it holds three informative groups, or at the bound.
        if (kept < 3) expect(rounds).toBe(maxBatches - 1);
      }
      // With these seeds some step tied and drew again, which a bound of one batch cannot.
      const extra = [1, 2, 3].reduce((n, step) => n + steps.get(step)!['rollout/dynamic_sampling_rounds'], 0);
      if (maxBatches === 1) expect(extra).toBe(0);
      else expect(extra).toBeGreaterThan(0);
    }
  }, 120_000);

  it('gigpo: runs real steps on FrozenLake with a reference for its KL and no critic', async () => {
    const trainer = await Trainer.create(tinySpec({ algorithm: { id: 'gigpo', config: { miniBatchSize: 4 } }, training: { steps: 2, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 0, warmup: { steps: 5, batchSize: 16 } } }));
    const { steps } = await collect(trainer);
    trainer.dispose();
    const last = steps.get(2)!;
    expect(last['kl/ref']).toBeDefined();
    expect(last['loss/value']).toBeUndefined();
    expect(Number.isFinite(last['loss/policy'])).toBe(true);
    expect(last['rollout/extra_groups']).toBeUndefined();
  }, 120_000);
});

describe('learningRateScale', () => {
  it('is 1 throughout for constant, and a half cosine from 1 to 0.1 for cosine', () => {
    expect([1, 50, 200].map((step) => learningRateScale('constant', step, 200))).toEqual([1, 1, 1]);
    expect(learningRateScale('cosine', 1, 3)).toBeCloseTo(0.1 + 0.9 * 0.5 * (1 + Math.cos(0)), 12); // 1
    expect(learningRateScale('cosine', 2, 3)).toBeCloseTo(0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI / 2)), 12); // 0.55
    expect(learningRateScale('cosine', 3, 3)).toBeCloseTo(0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI)), 12); // 0.1
  });
});

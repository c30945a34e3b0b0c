import { baselines } from '../../src/training/experiment/baselines';
import { mean } from '../../src/training/algorithms/stats';
import { METRIC } from '../../src/training/signals/step-metrics';
import { parseJobSpec } from '../../src/training/spec/validate';
import { trainTracking } from '../support/learning';
import { useTestBackend } from '../support/tf';

/**
 * The default non-slippery FrozenLake job (only the environment, the preset and a budget are
 * given): its recipe's model and imitation batches, then 30 steps of StarPO-S under RAGEN's
 * protocol (whole-episode history, minibatches of 32, 256 held-out maps sampled at 0.5).
 *
 * The recipe imitates 10,000 steps of 128 turns on this map (recipes.ts); the whole job took 28
 * minutes of a core with AVX-512 (docs/training-speed.md). This test imitates the first 200 of them, so that CI stays within its time. The full
 * default's figures are bench/learning's (docs/results.md): 0.949–0.984 after the warm-up, 0.964
 * after 100 steps.
 *
 * What must hold: the warm-up policy solves far more maps than the random agent on the same
 * seeds; RL then raises the success of its own rollouts (fresh maps every step, sampled at
 * temperature 1) without losing evaluation success. Seed 1, 200 steps of 128 turns: eval 0.637
 * after the warm-up (random 0.216), rollout success 0.424 over the first ten steps and 0.624 over
 * the last ten, eval 0.672 at the end; 63–65 s on a core of a 2-core machine with AVX-512 (or its
 * AVX2 kernel), most of it the imitation. At 120 imitation steps the policy is still at the random
 * agent's level (0.227), and at batches of 64 turns it ends the warm-up at 0.566, for about a
 * sixth less time, so the cut stays 200 × 128.
 */
/** The imitation steps and RL steps this test trains: a cut of the default job that fits CI. */
const IMITATION_STEPS = 200;
const RL_STEPS = 30;

describe('learning: the default non-slippery FrozenLake job (StarPO-S from demonstrations)', () => {
  beforeAll(useTestBackend);

  it('imitates well above random, and RL raises the success of its rollouts', async () => {
    const job = { environment: { id: 'frozenlake', config: { slippery: false } }, algorithm: { id: 'starpo-s' } };
    const defaults = parseJobSpec(job);
    expect(defaults.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 10000, batchSize: 128 });
    const spec = parseJobSpec({ ...job, training: { steps: RL_STEPS, evalEvery: 0, seed: 1, checkpointEvery: 0, warmup: { steps: IMITATION_STEPS } } });
    expect([spec.model.config, spec.training.warmup]).toEqual([defaults.model.config, { ...defaults.training.warmup, steps: IMITATION_STEPS }]);
    const { random } = await baselines(spec);
    const { evals, series } = await trainTracking(spec, [METRIC.successRate]);
    const rolloutSuccess = series[METRIC.successRate];
    const afterWarmup = evals.get(0)!;
    const final = evals.get(RL_STEPS)!;
    const [first, last] = [mean(rolloutSuccess.slice(0, 10)), mean(rolloutSuccess.slice(-10))];
    console.log(`frozenlake: random ${random.toFixed(3)}, eval ${afterWarmup.toFixed(3)} -> ${final.toFixed(3)}, rollout success ${first.toFixed(3)} (steps 1-10) -> ${last.toFixed(3)} (the last ten steps)`);
    expect(afterWarmup).toBeGreaterThanOrEqual(random + 0.25);
    expect(last - first).toBeGreaterThanOrEqual(0.08);
    expect(final).toBeGreaterThanOrEqual(afterWarmup - 0.03);
  }, 900_000);
});

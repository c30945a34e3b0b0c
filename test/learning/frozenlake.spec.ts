import { baselines } from '../../bench/baselines';
import { METRIC, evalSuccessOf } from '../../src/training/signals/step-metrics';
import { parseJobSpec } from '../../src/training/spec/validate';
import { Trainer } from '../../src/training/trainer';
import { useTestBackend } from '../support/tf';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The default non-slippery FrozenLake job (only the environment, the preset and a budget are
 * given): the demonstrations warm-up of its recipe, then 40 steps of StarPO-S under RAGEN's
 * protocol (whole-episode history, minibatches of 32, 256 held-out maps sampled at 0.5).
 *
 * What must hold: the warm-up policy solves far more maps than the random agent on the same
 * seeds; RL then raises the success of its own rollouts (fresh maps every step, sampled at
 * temperature 1) without losing evaluation success. Seed 1: eval 0.574 after the warm-up (random
 * 0.22), rollout success 0.42 over the first ten steps and 0.54 over the last ten, eval 0.602 at
 * the end.
 */
describe('learning: the default non-slippery FrozenLake job (StarPO-S from demonstrations)', () => {
  beforeAll(useTestBackend);

  it('imitates well above random, and RL raises the success of its rollouts', async () => {
    const spec = parseJobSpec({
      environment: { id: 'frozenlake', config: { slippery: false } },
      algorithm: { id: 'starpo-s' },
      training: { steps: 40, evalEvery: 0, seed: 1, checkpointEvery: 0 },
    });
    expect(spec.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 400 });
    const { random } = baselines(spec);
    const trainer = await Trainer.create(spec);
    const evals = new Map<number, number>();
    const rolloutSuccess: number[] = [];
    await trainer.run({
      onStep: (step, metrics) => {
        const value = evalSuccessOf(metrics);
        if (value !== undefined) evals.set(step, value);
        if (step > 0) rolloutSuccess.push(metrics[METRIC.successRate]);
      },
    });
    trainer.dispose();
    const afterWarmup = evals.get(0)!;
    const final = evals.get(40)!;
    const [first, last] = [mean(rolloutSuccess.slice(0, 10)), mean(rolloutSuccess.slice(-10))];
    console.log(`frozenlake: random ${random.toFixed(3)}, eval ${afterWarmup.toFixed(3)} -> ${final.toFixed(3)}, rollout success ${first.toFixed(3)} (steps 1-10) -> ${last.toFixed(3)} (steps 31-40)`);
    expect(afterWarmup).toBeGreaterThanOrEqual(random + 0.25);
    expect(last - first).toBeGreaterThanOrEqual(0.08);
    expect(final).toBeGreaterThanOrEqual(afterWarmup - 0.03);
  }, 900_000);
});

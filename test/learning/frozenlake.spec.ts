import { evalSuccessCurve } from '../support/learning';
import { useTestBackend } from '../support/tf';

/**
 * StarPO-S on non-slippery FrozenLake (4×4, RAGEN's budget: 5 turns, 10 actions) from a
 * demonstrations warm-up: RL must add at least 0.2 to the imitation policy's success on 128
 * held-out maps and reach 0.8, evaluated by sampling at temperature 1.
 *
 * The recipe (the setup bench/learning.ts uses for every run of the README's learning table): a 2-layer d=32
 * transformer with rotary positions, the current observation only, no <think> block (random
 * thought tokens were noise the policy conditioned on), 16×8 rollouts, four minibatches per
 * step, entropy bonus 0.003, cosine learning-rate decay. Seed 1 goes from 0.41 to 0.81.
 */
describe('learning: non-slippery FrozenLake with StarPO-S from demonstrations', () => {
  beforeAll(useTestBackend);

  it('rises by at least 0.2 over the warm-up policy and reaches 0.8 eval success', async () => {
    const evals = await evalSuccessCurve(
      {
        environment: { id: 'frozenlake', config: { slippery: false } },
        algorithm: { id: 'starpo-s', config: { miniBatches: 4, entropyCoef: 0.003 } },
        model: { config: { layers: 2, dModel: 32, heads: 2, contextLength: 64 } },
        rollout: { groups: 16, groupSize: 8, historyTurns: 0, maxTokensPerTurn: 24, think: false },
        training: { steps: 250, seed: 1, lrSchedule: 'cosine', evalEvery: 50, evalEpisodes: 128, evalTemperature: 1, checkpointEvery: 0, warmup: { kind: 'demonstrations', steps: 150 } },
      },
      'frozenlake',
    );
    const afterWarmup = evals.get(0)!;
    const final = evals.get(250)!;
    expect(final - afterWarmup).toBeGreaterThanOrEqual(0.2);
    expect(final).toBeGreaterThanOrEqual(0.8);
  }, 900_000);
});

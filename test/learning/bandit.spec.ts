import { evalSuccessCurve } from '../support/learning';
import { useTestBackend } from '../support/tf';

/**
 * StarPO-S learns the bandit from a format warm-up: the warm-up teaches the response format
 * with uniformly random arms (no preference), RL must find that dragon (0.25 expected) beats
 * phoenix (0.1 sure). Evaluated by sampling at temperature 1 on 128 held-out seeds, so a
 * policy that is merely tilted towards dragon does not pass.
 */
describe('learning: Bandit with StarPO-S from the format warm-up', () => {
  beforeAll(useTestBackend);

  it('chooses the high arm in at least 90% of evaluation episodes', async () => {
    const evals = await evalSuccessCurve(
      {
        environment: { id: 'bandit' },
        algorithm: { id: 'starpo-s' },
        model: { config: { dModel: 32, contextLength: 48 } },
        rollout: { groups: 8, groupSize: 8, maxTokensPerTurn: 16 },
        training: { steps: 160, seed: 1, evalEvery: 40, evalEpisodes: 128, evalTemperature: 1, warmup: { kind: 'format', steps: 120 } },
      },
      'bandit',
    );
    const afterWarmup = evals.get(0)!;
    const final = evals.get(160)!;
    // The format warm-up has no preference between the arms (≈ half of valid answers).
    expect(afterWarmup).toBeLessThan(0.7);
    expect(final).toBeGreaterThanOrEqual(0.9);
  }, 300_000);
});

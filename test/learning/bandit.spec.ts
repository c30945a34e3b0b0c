import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalSuccessCurve } from '../support/learning';
import { useTestBackend } from '../support/tf';

/**
 * StarPO-S learns the bandit from the default format warm-up: the warm-up teaches the response
 * format with uniformly random arms (no preference), RL must find that dragon (0.25 expected)
 * beats phoenix (0.1 sure). The job is the quick start's example: the defaults (RAGEN's update
 * and evaluation protocol: 256 held-out seeds sampled at temperature 0.5) and 40 steps.
 */
describe('learning: Bandit with StarPO-S from the format warm-up', () => {
  beforeAll(useTestBackend);

  it('chooses the high arm in at least 90% of evaluation episodes', async () => {
    // The quick start's example job, so the README's promise is what this test checks.
    const example = JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'bandit.json'), 'utf8'));
    expect(Object.keys(example).sort()).toEqual(['algorithm', 'environment', 'name', 'training']);
    expect(example.training).toEqual({ steps: 40, evalEvery: 20 });
    const evals = await evalSuccessCurve({ ...example, training: { ...example.training, seed: 1 } }, 'bandit');
    const afterWarmup = evals.get(0)!;
    const final = evals.get(40)!;
    // The format warm-up has no preference between the arms (≈ half of valid answers).
    expect(afterWarmup).toBeLessThan(0.7);
    expect(final).toBeGreaterThanOrEqual(0.9);
  }, 300_000);
});

import { FrozenLakeEnv, shortestFrozenPath } from '../envs/frozenlake';
import { evaluationSeed } from '../seeds';
import { parseJobSpec } from '../spec/validate';
import { actionBudget, baselines } from './baselines';

describe('baselines: the optimum within the job’s budgets', () => {
  it('counts the actions the turns allow when they are fewer than the episode’s', () => {
    expect(actionBudget({ maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerEpisode: 10 })).toBe(10); // min(10, 5 × 5)
    expect(actionBudget({ maxTurns: 5, maxActionsPerTurn: 1, maxActionsPerEpisode: 10 })).toBe(5); // min(10, 5 × 1)
    expect(actionBudget({ maxTurns: 3, maxActionsPerTurn: 2, maxActionsPerEpisode: 10 })).toBe(6); // min(10, 3 × 2)
  });

  it('on the non-slippery lake at one action a turn, is the share of maps whose shortest path fits the turns', async () => {
    const spec = parseJobSpec({
      environment: { id: 'frozenlake', config: { slippery: false } },
      algorithm: { id: 'starpo-s' },
      rollout: { maxTurns: 2, maxActionsPerTurn: 1 },
      training: { evalEpisodes: 32, warmup: { kind: 'format' } },
    });
    const fits = Array.from({ length: 32 }, (_, i) => {
      const env = new FrozenLakeEnv({ size: 4, frozenProb: 0.8, slippery: false });
      env.reset(evaluationSeed(i));
      return shortestFrozenPath(env.state)!.length <= 2 ? 1 : 0;
    });
    const { optimal } = await baselines(spec);
    expect(optimal).toBeCloseTo(fits.reduce((a: number, b) => a + b, 0) / 32, 10);
    expect(optimal).toBeLessThan(1); // some of the 32 maps need more than 2 actions
  });
});

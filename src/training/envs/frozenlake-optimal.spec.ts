import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { optimalSuccessProbability } from './frozenlake-optimal';

describe('optimalSuccessProbability', () => {
  it('is 1 on non-slippery ice exactly when the budget covers the shortest path', () => {
    const env = new FrozenLakeEnv({ size: 5, slippery: false });
    for (let seed = 0; seed < 100; seed++) {
      env.reset(seed);
      const pathLength = shortestFrozenPath(env.state)!.length;
      expect([seed, optimalSuccessProbability(env, pathLength)]).toEqual([seed, 1]);
      expect([seed, optimalSuccessProbability(env, pathLength - 1)]).toEqual([seed, 0]);
    }
  });

  it('matches the hand-computed value on a slippery ledge (push against the wall: 1 − (2/3)^K)', () => {
    // From P, "Up" stays put with probability 2/3 (Up and Left leave the grid) and slips Right
    // onto the goal with 1/3, never into a hole; every other action risks a hole.
    const env = new FrozenLakeEnv({ slippery: true });
    env.resetToMap(['PGO', 'OOO', 'OOO'], 0);
    expect(optimalSuccessProbability(env, 0)).toBe(0);
    expect(optimalSuccessProbability(env, 1)).toBeCloseTo(1 / 3, 12);
    expect(optimalSuccessProbability(env, 2)).toBeCloseTo(1 / 3 + (2 / 3) * (1 / 3), 12);
    expect(optimalSuccessProbability(env, 3)).toBeCloseTo(1 - (2 / 3) ** 3, 12);
  });

  it('grows with the budget and stays a probability on slippery 4×4 maps', () => {
    const env = new FrozenLakeEnv();
    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      const values = [0, 2, 5, 10, 50].map((budget) => optimalSuccessProbability(env, budget));
      const sorted = [...values].sort((a, b) => a - b);
      expect(values).toEqual(sorted);
      expect(values[4]).toBeLessThanOrEqual(1 + 1e-12);
      expect(values[4]).toBeGreaterThan(0);
    }
  });

  it('rejects a negative or fractional budget', () => {
    const env = new FrozenLakeEnv();
    env.reset(0);
    expect(() => optimalSuccessProbability(env, -1)).toThrow(RangeError);
    expect(() => optimalSuccessProbability(env, 1.5)).toThrow(RangeError);
  });
});

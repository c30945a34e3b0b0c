import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { optimalSuccessProbability, turnOptimalActions, turnOptimalSuccessProbability } from './frozenlake-optimal';

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

describe('turnOptimalSuccessProbability', () => {
  it('counts turns and the per-turn cap on non-slippery ice (three moves right to the goal)', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.resetToMap(['P__G'], 0);
    expect(turnOptimalSuccessProbability(env, { turns: 1, actionsPerTurn: 2, actions: 10 })).toBe(0);
    expect(turnOptimalSuccessProbability(env, { turns: 2, actionsPerTurn: 2, actions: 10 })).toBe(1);
    expect(turnOptimalSuccessProbability(env, { turns: 1, actionsPerTurn: 3, actions: 10 })).toBe(1);
    expect(turnOptimalSuccessProbability(env, { turns: 5, actionsPerTurn: 5, actions: 2 })).toBe(0);
  });

  it('loses nothing to blindness where one action is safe whatever the slip (the ledge: 1 − (2/3)^3 in one turn)', () => {
    const env = new FrozenLakeEnv({ slippery: true });
    env.resetToMap(['PGO', 'OOO', 'OOO'], 0);
    expect(turnOptimalSuccessProbability(env, { turns: 1, actionsPerTurn: 3, actions: 3 })).toBeCloseTo(1 - (2 / 3) ** 3, 12);
    expect(turnOptimalSuccessProbability(env, { turns: 1, actionsPerTurn: 2, actions: 3 })).toBeCloseTo(1 - (2 / 3) ** 2, 12);
  });

  it('lies between one observed action a turn and every action observed, and equals the first with one action a turn', () => {
    const env = new FrozenLakeEnv({ slippery: true });
    let strictlyBelow = 0;
    for (let seed = 0; seed < 40; seed++) {
      env.reset(seed);
      const turnOptimum = turnOptimalSuccessProbability(env, { turns: 3, actionsPerTurn: 3, actions: 6 });
      expect(turnOptimum).toBeGreaterThanOrEqual(optimalSuccessProbability(env, 3) - 1e-12);
      expect(turnOptimum).toBeLessThanOrEqual(optimalSuccessProbability(env, 6) + 1e-12);
      if (turnOptimum < optimalSuccessProbability(env, 6) - 1e-9) strictlyBelow++;
      expect(turnOptimalSuccessProbability(env, { turns: 4, actionsPerTurn: 1, actions: 6 })).toBeCloseTo(optimalSuccessProbability(env, 4), 12);
    }
    // Slips seen only between turns cost something on some maps.
    expect(strictlyBelow).toBeGreaterThan(0);
  });

  it('rejects a budget that is not a positive integer', () => {
    const env = new FrozenLakeEnv();
    env.reset(0);
    expect(() => turnOptimalSuccessProbability(env, { turns: 0, actionsPerTurn: 1, actions: 1 })).toThrow(RangeError);
    expect(() => turnOptimalSuccessProbability(env, { turns: 1, actionsPerTurn: 1.5, actions: 1 })).toThrow(RangeError);
  });
});

describe('turnOptimalActions', () => {
  it('takes the shorter of equally good turns, and as many actions as one turn needs', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.resetToMap(['P__G'], 0);
    // Two turns of two: Right now and two more next turn succeed as surely as two now.
    expect(turnOptimalActions(env, { turns: 2, actionsPerTurn: 2, actions: 10 })).toEqual(['Right']);
    expect(turnOptimalActions(env, { turns: 1, actionsPerTurn: 3, actions: 10 })).toEqual(['Right', 'Right', 'Right']);
    // Out of reach in the budget: nothing to commit to.
    expect(turnOptimalActions(env, { turns: 1, actionsPerTurn: 2, actions: 10 })).toEqual([]);
  });

  it('pushes against the wall on the slippery ledge, the one move that cannot fall', () => {
    const env = new FrozenLakeEnv({ slippery: true });
    env.resetToMap(['PGO', 'OOO', 'OOO'], 0);
    expect(turnOptimalActions(env, { turns: 1, actionsPerTurn: 2, actions: 10 })).toEqual(['Up', 'Up']);
    env.step('Right');
    while (!env.done) env.step('Down');
    expect(turnOptimalActions(env, { turns: 1, actionsPerTurn: 2, actions: 10 })).toEqual([]);
  });

  it('succeeds as often as turnOptimalSuccessProbability says when played on slippery maps', () => {
    // 12 maps × 400 slip draws each: the standard error of the mean is at most 0.5/√4800 ≈ 0.007.
    const budget = { turns: 5, actionsPerTurn: 2, actions: 10 };
    const env = new FrozenLakeEnv({ slippery: true });
    let expected = 0;
    let successes = 0;
    const plays = 400;
    for (let seed = 0; seed < 12; seed++) {
      env.reset(seed);
      expected += turnOptimalSuccessProbability(env, budget) * plays;
      for (let draw = 0; draw < plays; draw++) {
        const play = env.clone(draw);
        let actionsLeft = budget.actions;
        for (let turn = 0; turn < budget.turns && !play.done; turn++) {
          const actions = turnOptimalActions(play, { ...budget, turns: budget.turns - turn, actions: actionsLeft });
          expect(actions.length).toBeLessThanOrEqual(budget.actionsPerTurn);
          if (actions.length === 0) break;
          for (const action of actions) {
            if (play.done) break;
            if (play.step(action).info.success) successes++;
            actionsLeft--;
          }
        }
      }
    }
    expect(Math.abs(successes - expected) / (12 * plays)).toBeLessThan(0.025);
  });
});

import { BanditEnv } from './bandit';
import { FROZEN_LAKE_TURN_EXPERT_ACTIONS, frozenLakeExpert, frozenLakeTurnExpert, sokobanExpert } from './experts';
import { turnOptimalActions } from './frozenlake-optimal';
import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { SokobanEnv } from './sokoban';

describe('frozenLakeExpert', () => {
  it('reaches the goal of 200 non-slippery maps in exactly the planned number of steps', () => {
    const failures: number[] = [];
    for (let seed = 0; seed < 200; seed++) {
      const env = new FrozenLakeEnv({ size: 3 + (seed % 6), slippery: false });
      env.reset(seed);
      const plan = frozenLakeExpert(env);
      const shortest = shortestFrozenPath(env.state)!.length;
      let total = 0;
      for (const action of plan) total += env.step(action).reward;
      if (plan.length !== shortest || !env.done || total !== 1) failures.push(seed);
    }
    expect(failures).toEqual([]);
  });

  it('re-plans from the current tile on slippery ice and returns [] once the episode is over', () => {
    const env = new FrozenLakeEnv({ size: 6, frozenProb: 1 });
    env.reset(2);
    for (let turn = 0; turn < 200 && !env.done; turn++) {
      const plan = frozenLakeExpert(env);
      expect(plan).toHaveLength(shortestFrozenPath(env.state)!.length);
      env.step(plan[0]);
    }
    expect(env.done).toBe(true);
    expect(frozenLakeExpert(env)).toEqual([]);
  });

  it('refuses another environment', () => {
    expect(() => frozenLakeExpert(new BanditEnv())).toThrow(TypeError);
  });
});

describe('frozenLakeTurnExpert', () => {
  const turn = { turns: 5, actionsPerTurn: 5, actions: 10 };

  it('answers on slippery ice with the turn-optimal sequence of at most FROZEN_LAKE_TURN_EXPERT_ACTIONS', () => {
    const env = new FrozenLakeEnv({ slippery: true });
    for (let seed = 0; seed < 20; seed++) {
      env.reset(seed);
      const actions = frozenLakeTurnExpert(env, turn);
      const optimal = turnOptimalActions(env, { ...turn, actionsPerTurn: FROZEN_LAKE_TURN_EXPERT_ACTIONS });
      expect([seed, actions]).toEqual([seed, optimal.length > 0 ? optimal : null]);
      expect(actions!.length).toBeLessThanOrEqual(FROZEN_LAKE_TURN_EXPERT_ACTIONS);
    }
  });

  it('leaves non-slippery ice and ended episodes to the shortest path (null)', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.reset(3);
    expect(frozenLakeTurnExpert(env, turn)).toBeNull();
    const slippery = new FrozenLakeEnv({ slippery: true });
    slippery.resetToMap(['PO', 'OG'], 0);
    while (!slippery.done) slippery.step('Down');
    expect(frozenLakeTurnExpert(slippery, turn)).toBeNull();
  });

  it('refuses another environment', () => {
    expect(() => frozenLakeTurnExpert(new BanditEnv(), turn)).toThrow(TypeError);
  });
});

describe('sokobanExpert', () => {
  it('solves generated rooms: the plan earns −0.1 per move plus +1 +10 at the end', () => {
    const env = new SokobanEnv();
    const failures: number[] = [];
    for (let seed = 0; seed < 100; seed++) {
      env.reset(seed);
      const plan = sokobanExpert(env);
      let total = 0;
      for (const action of plan) total += env.step(action).reward;
      // One box: an optimal plan touches the target only with the final push.
      const expected = -0.1 * plan.length + 1 + 10;
      if (!env.done || plan.length === 0 || Math.abs(total - expected) > 1e-9) failures.push(seed);
    }
    expect(failures).toEqual([]);
    expect(sokobanExpert(env)).toEqual([]);
  });

  it('solves 2-box rooms and returns [] when a box is stuck', () => {
    const env = new SokobanEnv({ width: 8, height: 8, boxes: 2 });
    for (let seed = 0; seed < 20; seed++) {
      env.reset(seed);
      for (const action of sokobanExpert(env)) env.step(action);
      expect([seed, env.done]).toEqual([seed, true]);
    }
    env.resetToRoom(['#####', '#X__#', '#_P_#', '#__O#', '#####']);
    expect(sokobanExpert(env)).toEqual([]);
  });
});

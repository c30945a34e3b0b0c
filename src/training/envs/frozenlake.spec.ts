import { expectIndependentClone } from '../../../test/support/env-checks';
import { EpisodeDoneError, InvalidEnvConfigError } from './common';
import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { GRID_ACTIONS, slipOutcomes } from './grid';
import { Rng } from '../random';

/** Rewards of a scripted action list. */
function rewardsOf(env: FrozenLakeEnv, actions: readonly string[]): number[] {
  return actions.map((action) => env.step(action).reward);
}

describe('FrozenLakeEnv maps', () => {
  it.each([
    [3, 0.8],
    [4, 0.8],
    [4, 0.5],
    [6, 0.8],
    [8, 0.6],
  ])('every %i×%i map (frozen p=%f) over 500 seeds has a path from start to goal', (size, frozenProb) => {
    const env = new FrozenLakeEnv({ size, frozenProb });
    const problems: string[] = [];
    let holes = 0;
    for (let seed = 0; seed < 500; seed++) {
      const observation = env.reset(seed);
      const { start, goal, player, holes: holeMap } = env.state;
      holes += holeMap.filter(Boolean).length;
      const rows = observation.split('\n');
      const wellFormed =
        rows.length === size &&
        rows.every((row) => row.length === size && /^[P_OG]+$/.test(row)) &&
        observation.split('P').length === 2 &&
        observation.split('G').length === 2;
      if (!wellFormed || start === goal || player !== start || shortestFrozenPath(env.state) === null) {
        problems.push(`seed ${seed}:\n${observation}`);
      }
    }
    expect(problems).toEqual([]);
    // Reachability resampling removes some holes, so the realised share is at most 1 − p.
    expect(holes / (500 * size * size)).toBeLessThan(1 - frozenProb + 0.02);
  });

  it('is deterministic per seed and varies across seeds', () => {
    const env = new FrozenLakeEnv();
    const maps = Array.from({ length: 100 }, (_, seed) => env.reset(seed));
    expect(Array.from({ length: 100 }, (_, seed) => env.reset(seed))).toEqual(maps);
    expect(new Set(maps).size).toBeGreaterThan(90);
  });
});

describe('FrozenLakeEnv dynamics', () => {
  it('slips to each perpendicular move with probability 1/3 and never backwards', () => {
    const env = new FrozenLakeEnv({ size: 8, frozenProb: 1, slippery: true });
    const actionRng = new Rng(5);
    const steps = 20_000;
    const counts = { intended: 0, clockwise: 0, counterClockwise: 0, other: 0 };
    let seed = 0;
    env.reset(seed);
    for (let i = 0; i < steps; i++) {
      if (env.done) env.reset(++seed);
      const intended = actionRng.pick(GRID_ACTIONS);
      env.step(intended);
      const [counter, , clockwise] = slipOutcomes(intended);
      const realised = env.lastRealisedMove;
      if (realised === intended) counts.intended++;
      else if (realised === clockwise) counts.clockwise++;
      else if (realised === counter) counts.counterClockwise++;
      else counts.other++;
    }
    const sigma = Math.sqrt(((1 / 3) * (2 / 3)) / steps);
    expect(counts.other).toBe(0);
    for (const count of [counts.intended, counts.clockwise, counts.counterClockwise]) {
      expect(Math.abs(count / steps - 1 / 3)).toBeLessThan(4 * sigma);
    }
  });

  it('never slips when slippery is off', () => {
    const env = new FrozenLakeEnv({ size: 8, frozenProb: 1, slippery: false });
    const realised = new Set<boolean>();
    let seed = 0;
    env.reset(seed);
    for (let i = 0; i < 2000; i++) {
      if (env.done) env.reset(++seed);
      const action = GRID_ACTIONS[i % 4];
      env.step(action);
      realised.add(env.lastRealisedMove === action);
    }
    expect(realised).toEqual(new Set([true]));
  });

  const lake = ['P_O', '__G', '___'];

  it('scores a scripted walk into a hole: invalid and ineffective actions, then the hole', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.resetToMap(lake, 0);
    const results = ['jump', 'Up', 'right', 'Right'].map((action) => env.step(action));
    expect(results.map((r) => r.reward)).toEqual([0, 0, 0, 0]);
    expect(results.map((r) => r.info)).toEqual([
      { success: false, actionValid: false, actionEffective: false },
      { success: false, actionValid: true, actionEffective: false },
      { success: false, actionValid: true, actionEffective: true },
      { success: false, actionValid: true, actionEffective: true },
    ]);
    expect(results.map((r) => r.done)).toEqual([false, false, false, true]);
    expect(results[3].observation).toBe('__X\n__G\n___');
    expect(() => env.step('Left')).toThrow(EpisodeDoneError);
  });

  it('scores a scripted walk to the goal with +1', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.resetToMap(lake, 0);
    expect(rewardsOf(env, ['Down', 'Right', 'Right'])).toEqual([0, 0, 1]);
    expect(env.done).toBe(true);
    expect(env.render()).toBe('__O\n__√\n___');
  });

  it('replays slips exactly for the same seed and actions', () => {
    const env = new FrozenLakeEnv({ size: 6 });
    const actions = ['Down', 'Right', 'Down', 'Right', 'Up', 'Left', 'Down', 'Right'];
    const play = (seed: number) => {
      const frames = [env.reset(seed)];
      for (const action of actions) {
        if (env.done) break;
        const { observation, reward } = env.step(action);
        frames.push(`${observation} ${reward}`);
      }
      return frames;
    };
    const runs = Array.from({ length: 30 }, (_, seed) => play(seed));
    expect(Array.from({ length: 30 }, (_, seed) => play(seed))).toEqual(runs);
  });

  it('clones are independent and share the future under the same actions', () => {
    const env = new FrozenLakeEnv({ size: 8, frozenProb: 1 });
    env.reset(3);
    env.step('Down');
    expectIndependentClone(env, ['Right', 'Down', 'Left', 'Up', 'Right', 'Right']);
  });

  it('a clone given a branch seed keeps the state but draws its own slips', () => {
    const env = new FrozenLakeEnv({ size: 8, frozenProb: 1, slippery: true });
    env.reset(3);
    env.step('Down');
    const slips = (target: FrozenLakeEnv) =>
      Array.from({ length: 12 }, () => {
        if (target.done) return null;
        target.step('Right');
        return target.lastRealisedMove;
      });
    const same = env.clone();
    const branches = [101, 202].map((seed) => env.clone(seed));
    expect(branches.map((b) => b.state)).toEqual([env.state, env.state]);
    const original = slips(env);
    expect(slips(same)).toEqual(original);
    // Two branches and the original: three different slip sequences over 12 moves.
    const branchSlips = branches.map(slips);
    expect(new Set([original, ...branchSlips].map((s) => s.join(','))).size).toBe(3);
  });

  it('rejects configs outside the bounds', () => {
    expect(() => new FrozenLakeEnv({ size: 9 })).toThrow(InvalidEnvConfigError);
    expect(() => new FrozenLakeEnv({ frozenProb: 0.4 })).toThrow(/frozenProb/);
    expect(() => new FrozenLakeEnv().render()).toThrow(/reset/);
  });
});

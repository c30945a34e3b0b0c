import { EpisodeDoneError, InvalidEnvConfigError } from './common';
import { ALT_ARM_PAIRS, BanditEnv } from './bandit';

describe('BanditEnv', () => {
  it('lists the two default arms in an order shuffled across seeds', () => {
    const env = new BanditEnv();
    const orders = new Map<string, number>();
    for (let seed = 0; seed < 200; seed++) {
      const observation = env.reset(seed);
      orders.set(observation, (orders.get(observation) ?? 0) + 1);
    }
    expect([...orders.keys()].sort()).toEqual(['Arms : dragon phoenix', 'Arms : phoenix dragon']);
    for (const count of orders.values()) expect(count).toBeGreaterThan(60);
  });

  it('pays phoenix 0.1 on every pull and ends the episode without success', () => {
    const env = new BanditEnv();
    for (let seed = 0; seed < 200; seed++) {
      env.reset(seed);
      const result = env.step('phoenix');
      expect(result).toEqual({
        observation: env.render(),
        reward: 0.1,
        done: true,
        info: { success: false, actionValid: true, actionEffective: true },
      });
    }
  });

  it('pays dragon 1.0 with probability 0.25 (else 0) and counts it as success', () => {
    const env = new BanditEnv();
    const pulls = 20_000;
    let paid = 0;
    const outcomes = new Set<string>();
    for (let seed = 0; seed < pulls; seed++) {
      env.reset(seed);
      const { reward, done, info } = env.step('dragon');
      outcomes.add(`${reward} ${done} ${info.success}`);
      paid += reward;
    }
    // Expect() inside a 20k loop dominates the run time; collect outcomes and assert once.
    expect(outcomes).toEqual(new Set(['0 true true', '1 true true']));
    const sigma = Math.sqrt((0.25 * 0.75) / pulls);
    expect(Math.abs(paid / pulls - 0.25)).toBeLessThan(4 * sigma);
  });

  it('does not execute an unknown arm and accepts a later valid pull, case-insensitively', () => {
    const env = new BanditEnv();
    const first = env.reset(7);
    expect(env.step('unicorn')).toEqual({
      observation: first,
      reward: 0,
      done: false,
      info: { success: false, actionValid: false, actionEffective: false },
    });
    expect(env.done).toBe(false);
    const pull = env.step('  DRAGON ');
    expect(pull.info).toEqual({ success: true, actionValid: true, actionEffective: true });
    expect(env.done).toBe(true);
    expect(() => env.step('dragon')).toThrow(EpisodeDoneError);
  });

  it('uses the configured payouts', () => {
    const env = new BanditEnv({ lowReward: -0.5, highReward: 3, highProb: 1 });
    env.reset(1);
    expect(env.step('phoenix').reward).toBe(-0.5);
    env.reset(1);
    expect(env.step('dragon').reward).toBe(3);
  });

  it('draws the same layout and payout for the same seed, and clones carry the payout draw', () => {
    const env = new BanditEnv();
    const rewards = (seed: number) => {
      env.reset(seed);
      return env.step('dragon').reward;
    };
    const firstRun = Array.from({ length: 50 }, (_, seed) => rewards(seed));
    expect(Array.from({ length: 50 }, (_, seed) => rewards(seed))).toEqual(firstRun);

    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      const copy = env.clone();
      expect(copy.step('dragon').reward).toBe(firstRun[seed]);
      expect(env.done).toBe(false);
      expect(env.step('dragon').reward).toBe(firstRun[seed]);
    }
  });

  it('alt variant draws unseen name pairs per seed; the high arm still means success', () => {
    const env = new BanditEnv({ variant: 'alt' });
    const seen = new Set<string>();
    for (let seed = 0; seed < 100; seed++) {
      env.reset(seed);
      const { pair } = env.state;
      seen.add(pair.high);
      expect(ALT_ARM_PAIRS).toContainEqual(pair);
      expect([...env.actionNames].sort()).toEqual([pair.low, pair.high].sort());
      expect(env.step(pair.high).info.success).toBe(true);
    }
    expect(seen).toEqual(new Set(ALT_ARM_PAIRS.map((pair) => pair.high)));
    env.reset(0);
    expect(env.step('dragon').info.actionValid).toBe(false);
  });

  it('rejects configs outside the bounds', () => {
    expect(() => new BanditEnv({ highProb: 1.5 })).toThrow(InvalidEnvConfigError);
    expect(() => new BanditEnv({ lowReward: -11 })).toThrow(/lowReward/);
  });
});

import { expectIndependentClone } from '../../../test/support/env-checks';
import { EpisodeDoneError, InvalidEnvConfigError } from './common';
import { SokobanEnv } from './sokoban';

describe('SokobanEnv rewards', () => {
  it('charges −0.1 per action (ineffective too), nothing for an invalid one, and +1 +10 on solving', () => {
    const env = new SokobanEnv();
    env.resetToRoom(['#######', '#PX_O_#', '#######']);
    const results = ['Up', 'fly', 'right', 'Right'].map((action) => env.step(action));
    const rewards = results.map((r) => r.reward);
    [-0.1, 0, -0.1, -0.1 + 1 + 10].forEach((expected, i) => expect(rewards[i]).toBeCloseTo(expected, 10));
    expect(results.map((r) => r.info)).toEqual([
      { success: false, actionValid: true, actionEffective: false },
      { success: false, actionValid: false, actionEffective: false },
      { success: false, actionValid: true, actionEffective: true },
      { success: true, actionValid: true, actionEffective: true },
    ]);
    expect(results.map((r) => r.done)).toEqual([false, false, false, true]);
    expect(env.render()).toBe('#######\n#__P√_#\n#######');
    expect(() => env.step('Left')).toThrow(EpisodeDoneError);
  });

  it('pays +1 onto a target and −1 off it, and shows the player on a target as S', () => {
    const env = new SokobanEnv();
    env.resetToRoom(['########', '#PXO_O_#', '#_____X#', '########']);
    const results = ['Right', 'Right', 'Right', 'Right', 'Right'].map((action) => env.step(action));
    const rewards = results.map((r) => r.reward);
    const expected = [-0.1 + 1, -0.1 - 1, -0.1 + 1, -0.1 - 1, -0.1];
    expected.forEach((reward, i) => expect(rewards[i]).toBeCloseTo(reward, 10));
    expect(results[1].observation).toBe('########\n#__SXO_#\n#_____X#\n########');
    expect(results[4].info.actionEffective).toBe(false);
    expect(results.some((r) => r.done)).toBe(false);
  });

  it('pays nothing extra for a push from one target onto another', () => {
    const env = new SokobanEnv();
    env.resetToRoom(['#######', '#P√OX_#', '#######']);
    const { reward, observation } = env.step('Right');
    expect(reward).toBeCloseTo(-0.1, 10);
    expect(observation).toBe('#######\n#_S√X_#\n#######');
  });

  it('solves with +10 when the last box reaches its target while another already sits on one', () => {
    const env = new SokobanEnv();
    env.resetToRoom(['#######', '#PXO√_#', '#######']);
    const result = env.step('Right');
    expect(result.reward).toBeCloseTo(-0.1 + 1 + 10, 10);
    expect(result.done && result.info.success).toBe(true);
  });
});

describe('SokobanEnv episodes', () => {
  it('is deterministic per seed and varies across seeds', () => {
    const env = new SokobanEnv();
    const rooms = Array.from({ length: 100 }, (_, seed) => env.reset(seed));
    expect(Array.from({ length: 100 }, (_, seed) => env.reset(seed))).toEqual(rooms);
    expect(new Set(rooms).size).toBeGreaterThan(90);
  });

  it('clones are independent and share the future under the same actions', () => {
    const env = new SokobanEnv();
    env.reset(11);
    expectIndependentClone(env, ['Left', 'Up', 'Right', 'Down', 'Down', 'Left']);
  });

  it('rejects configs outside the bounds', () => {
    expect(() => new SokobanEnv({ boxes: 4 })).toThrow(InvalidEnvConfigError);
    expect(() => new SokobanEnv({ width: 11 })).toThrow(/width/);
    expect(() => new SokobanEnv({ extra: 1 } as never)).toThrow(InvalidEnvConfigError);
  });
});

import { Rng } from './random';
import type { Trajectory } from './rollout/engine';
import { SelfImitationBuffer } from './self-imitation';

/** A trajectory of `turns` turns whose tokens name it: context [id, k], response [100 + id]. */
function trajectory(id: number, success: boolean, turns = 2, group = 0, actionCount = turns): Trajectory {
  return {
    seed: id,
    group,
    sample: id,
    initialObservation: '',
    turns: Array.from({ length: turns }, (_, k) => ({ context: [id, k], response: { tokens: [100 + id], logProbs: [-1] } })) as unknown as Trajectory['turns'],
    return: success ? 1 : 0,
    success,
    actionCount,
    formatErrors: 0,
    terminated: success,
  };
}

describe('SelfImitationBuffer', () => {
  it('keeps only successful episodes, first in first out, and counts every one it took', () => {
    const buffer = new SelfImitationBuffer(3);
    expect(buffer.add([trajectory(1, true), trajectory(2, false), trajectory(3, true)])).toBe(2);
    expect(buffer.add([trajectory(4, true), trajectory(5, true)])).toBe(2);
    expect(buffer.size).toBe(3);
    expect(buffer.total).toBe(4);
    // 1 was evicted: what is left is 3, 4, 5.
    expect(buffer.getState().episodes.map((e) => e[0].context[0])).toEqual([3, 4, 5]);
  });

  it("with 'shortest', keeps of each group's successes only those with the group's fewest actions", () => {
    const buffer = new SelfImitationBuffer(8);
    // Group 0: successes of 7, 3 and 3 actions and a 2-action failure; group 1: one success of 9.
    const step = [trajectory(1, true, 2, 0, 7), trajectory(2, true, 2, 0, 3), trajectory(3, true, 1, 0, 3), trajectory(4, false, 1, 0, 2), trajectory(5, true, 3, 1, 9)];
    expect(buffer.add(step, 'shortest')).toBe(3);
    expect(buffer.getState().episodes.map((e) => e[0].context[0])).toEqual([2, 3, 5]);
    expect(buffer.total).toBe(3);
    expect(new SelfImitationBuffer(8).add(step, 'all')).toBe(4);
  });

  it('samples whole episodes as packed rows whose targets are the responses', () => {
    const buffer = new SelfImitationBuffer(8);
    expect(buffer.sample(new Rng(1), 4)).toEqual([]);
    buffer.add([trajectory(7, true, 2)]);
    const rows = buffer.sample(new Rng(1), 3);
    // 3 draws of the one episode; each packs its 2 turns into one row when the second context extends the first.
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) for (const i of row.responseIndex) expect(row.tokens[i]).toBe(107);
  });

  it('restores its episodes and count from state, trimmed to capacity', () => {
    const buffer = new SelfImitationBuffer(4);
    buffer.add([1, 2, 3, 4].map((id) => trajectory(id, true)));
    const smaller = new SelfImitationBuffer(2);
    smaller.setState(JSON.parse(JSON.stringify(buffer.getState())));
    expect(smaller.size).toBe(2);
    expect(smaller.total).toBe(4);
    expect(smaller.getState().episodes.map((e) => e[0].context[0])).toEqual([3, 4]);
  });
});

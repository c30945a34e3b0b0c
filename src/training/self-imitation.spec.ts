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

  it("with 'advantage', weights each success by 1 − its group's success rate and leaves out groups that always succeeded", () => {
    const buffer = new SelfImitationBuffer(8);
    // Group 0: 1 of 4 solved; group 1: 2 of 4; group 2: 4 of 4 (nothing to learn).
    const step = [
      ...[true, false, false, false].map((ok, i) => trajectory(10 + i, ok, 2, 0)),
      ...[true, true, false, false].map((ok, i) => trajectory(20 + i, ok, 2, 1)),
      ...[true, true, true, true].map((ok, i) => trajectory(30 + i, ok, 2, 2)),
    ];
    expect(buffer.add(step, 'advantage')).toBe(3);
    const state = buffer.getState();
    expect(state.episodes.map((e) => e[0].context[0])).toEqual([10, 20, 21]);
    expect(state.weights).toEqual([1 - 1 / 4, 1 - 2 / 4, 1 - 2 / 4]);
  });

  it('draws episodes in proportion to their weights', () => {
    const buffer = new SelfImitationBuffer(8);
    // Episode 1 of weight 3/4 (1 of 4 solved) against episodes 5, 6, 7 of 1/4 each (3 of 4 solved):
    // 0.75 / (0.75 + 3 × 0.25) = half the draws, where a uniform draw would give it a quarter.
    buffer.add([trajectory(1, true, 1, 0), ...[2, 3, 4].map((id) => trajectory(id, false, 1, 0))], 'advantage');
    buffer.add([5, 6, 7].map((id) => trajectory(id, true, 1, 1)).concat(trajectory(8, false, 1, 1)), 'advantage');
    const drawn = buffer.sample(new Rng(3), 4000).map((row) => row.tokens[row.responseIndex[0]]);
    const first = drawn.filter((token) => token === 101).length / drawn.length;
    expect(buffer.size).toBe(4);
    expect(first).toBeCloseTo(0.75 / (0.75 + 3 * 0.25), 1);
  });

  it('restores weights with its episodes, and weight 1 for a checkpoint saved without them', () => {
    const buffer = new SelfImitationBuffer(4);
    buffer.add([trajectory(1, true, 1, 0), trajectory(2, false, 1, 0)], 'advantage');
    const restored = new SelfImitationBuffer(4);
    restored.setState(JSON.parse(JSON.stringify(buffer.getState())));
    expect(restored.getState().weights).toEqual([0.5]);
    restored.setState({ episodes: buffer.getState().episodes, added: 1 });
    expect(restored.getState().weights).toEqual([1]);
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

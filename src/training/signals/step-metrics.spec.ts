import type { Trajectory } from '../rollout/engine';
import { METRIC, byGroup, rolloutMetrics } from './step-metrics';

/** A one-turn trajectory with just what the rollout metrics read. */
function trajectory(group: number, sample: number, success: boolean): Trajectory {
  const turn = { text: `answer ${group}.${sample}`, executed: ['Up'], penalised: false, response: { tokens: [1, 2], entropies: [0.5, 0.5], logProbs: [0, 0] } };
  return { group, sample, seed: group, turns: [turn], return: success ? 1 : 0, success, actionCount: 1 } as unknown as Trajectory;
}

describe('rolloutMetrics: success/pass_at_k', () => {
  it('is the share of groups (k = group size) in which at least one rollout succeeded', () => {
    // Groups of k = 3: none, one and all three succeed, and one more of none.
    const outcomes = [[false, false, false], [false, true, false], [true, true, true], [false, false, false]];
    const groups = byGroup(outcomes.flatMap((group, g) => group.map((success, s) => trajectory(g, s, success))));
    const metrics = rolloutMetrics(groups, [0, 1, 2, 3], { open: 90, close: 91 });
    expect(METRIC.passAtK).toBe('success/pass_at_k');
    expect(metrics[METRIC.passAtK]).toBeCloseTo(2 / 4, 12);
    expect(metrics[METRIC.successRate]).toBeCloseTo(4 / 12, 12);
  });

  it('counts every group drawn, kept or not', () => {
    const groups = byGroup([trajectory(0, 0, true), trajectory(0, 1, false), trajectory(1, 0, false), trajectory(1, 1, false)]);
    expect(rolloutMetrics(groups, [1], { open: 90, close: 91 })[METRIC.passAtK]).toBeCloseTo(1 / 2, 12);
  });
});

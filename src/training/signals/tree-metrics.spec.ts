import type { Trajectory } from '../rollout/engine';
import type { TreeGroupStats } from '../rollout/tree';
import { METRIC, actionSequence, rolloutMetrics, treeMetrics } from './step-metrics';

describe('treeMetrics', () => {
  it('averages per prompt and counts runs of consecutive branching rounds, the last series open-ended', () => {
    const groups: TreeGroupStats[] = [
      { globalSamples: 5, branches: 3, branchRuns: [1, 2], afterFeedbackEntropies: [0.5, 1.5] },
      { globalSamples: 4, branches: 4, branchRuns: [4], afterFeedbackEntropies: [1] },
    ];
    expect(treeMetrics(groups, 3)).toEqual({
      [METRIC.branchesPerPrompt]: (3 + 4) / 2,
      [METRIC.globalSamples]: (5 + 4) / 2,
      [METRIC.entropyAfterFeedback]: expect.closeTo((0.5 + 1.5 + 1) / 3, 12),
      'rollout/consecutive_branches_1': (1 + 0) / 2,
      'rollout/consecutive_branches_2': (1 + 0) / 2,
      // The run of 4 counts in the last series (≥ 3).
      'rollout/consecutive_branches_3': (0 + 1) / 2,
    });
    expect(treeMetrics([{ globalSamples: 2, branches: 0, branchRuns: [], afterFeedbackEntropies: [] }], 2)).toEqual({
      [METRIC.branchesPerPrompt]: 0,
      [METRIC.globalSamples]: 2,
      [METRIC.entropyAfterFeedback]: 0,
      'rollout/consecutive_branches_1': 0,
      'rollout/consecutive_branches_2': 0,
    });
  });
});

describe('distinct action sequences', () => {
  const trajectory = (group: number, actions: string[][], text = 'same') =>
    ({ group, return: 0, success: false, actionCount: 0, turns: actions.map((executed) => ({ executed, text, penalised: false, response: { tokens: [1], entropies: [0] } })) }) as unknown as Trajectory;

  it('counts the distinct sequences of executed actions per prompt, whatever the text', () => {
    expect(actionSequence(trajectory(0, [['Up', 'Left'], ['Down']]))).toBe('Up Left | Down');
    // Turn boundaries matter: Up Left | Down is not Up | Left Down.
    const groups = [
      [trajectory(0, [['Up', 'Left'], ['Down']]), trajectory(0, [['Up'], ['Left', 'Down']]), trajectory(0, [['Up', 'Left'], ['Down']], 'other')],
      [trajectory(1, [['Right']]), trajectory(1, [['Right']])],
    ];
    expect(rolloutMetrics(groups, [0, 1], { open: 2, close: 3 })[METRIC.distinctActionSequences]).toBe((2 + 1) / 2);
  });
});

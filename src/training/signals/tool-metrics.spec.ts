import type { Trajectory } from '../rollout/engine';
import { METRIC } from './step-metrics';
import { toolMetrics } from './tool-metrics';

/** A trajectory with just the executed actions of its turns. */
const played = (...turns: string[][]): Trajectory => ({ turns: turns.map((executed) => ({ executed })) }) as unknown as Trajectory;

/** Every action is a call; those starting with "ok" ran. */
const count = (actions: readonly string[]) => ({ calls: actions.length, succeeded: actions.filter((a) => a.startsWith('ok')).length });

describe('toolMetrics', () => {
  it('averages calls over episodes and pools the success rate over all calls', () => {
    // Episodes with 3, 1 and 0 calls: 4 / 3 calls per episode; 2 of the 4 calls ran.
    const metrics = toolMetrics([played(['ok1'], ['bad', 'ok2']), played(['bad']), played([])], count);
    expect(metrics[METRIC.toolCallsPerEpisode]).toBeCloseTo((3 + 1 + 0) / 3, 12);
    expect(metrics[METRIC.toolSuccessRate]).toBeCloseTo(2 / 4, 12);
  });

  it('reports a success rate of 0 when no episode called a tool', () => {
    expect(toolMetrics([played([]), played()], count)).toEqual({ [METRIC.toolCallsPerEpisode]: 0, [METRIC.toolSuccessRate]: 0 });
  });
});

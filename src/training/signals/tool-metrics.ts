import { mean } from '../algorithms/stats';
import type { Trajectory } from '../rollout/engine';
import { METRIC, type Metrics } from './step-metrics';

/** How an environment counts one episode's tool calls (`EnvDefinition.toolCalls`, config bound). */
export type ToolCallCounter = (actions: readonly string[]) => { calls: number; succeeded: number };

/**
 * Tool signals of one step, from the actions each trajectory executed: mean tool calls per
 * episode, and the share of all calls the tool ran (0 when no episode called a tool, so the
 * series has a value every step).
 */
export function toolMetrics(trajectories: readonly Trajectory[], count: ToolCallCounter): Metrics {
  const counts = trajectories.map((t) => count(t.turns.flatMap((turn) => turn.executed)));
  const calls = counts.reduce((n, c) => n + c.calls, 0);
  const succeeded = counts.reduce((n, c) => n + c.succeeded, 0);
  return {
    [METRIC.toolCallsPerEpisode]: mean(counts.map((c) => c.calls)),
    [METRIC.toolSuccessRate]: calls > 0 ? succeeded / calls : 0,
  };
}

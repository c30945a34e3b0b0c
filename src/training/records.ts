import { mean } from './algorithms/stats';
import type { Trajectory } from './rollout/engine';

/** What the service stores per trajectory (the `Trajectory` table of prisma/schema.prisma). */
export interface TrajectoryRecord {
  group: number;
  sample: number;
  envSeed: number;
  return: number;
  success: boolean;
  turns: number;
  actions: number;
  formatErrors: number;
  tokens: number;
  meanEntropy: number;
  /** Observation and response of every turn; present for the configured sample only. */
  text?: string;
}

/** Turn-by-turn transcript a researcher can read. */
export function transcript(trajectory: Trajectory): string {
  return trajectory.turns
    .map((turn, i) => `--- turn ${i + 1} ---\n${turn.observation}\n> ${turn.text}\nreward ${round(turn.reward)}${turn.penalised ? ' (format penalty)' : ''}`)
    .join('\n');
}

/** Records for a step's trajectories, with text for the first `textSample` groups' first samples spread over groups. */
export function trajectoryRecords(trajectories: readonly Trajectory[], textSample: number): TrajectoryRecord[] {
  const withText = new Set(spread(trajectories.length, textSample));
  return trajectories.map((t, i) => {
    const tokens = t.turns.reduce((n, turn) => n + turn.response.tokens.length, 0);
    return {
      group: t.group,
      sample: t.sample,
      envSeed: t.seed,
      return: t.return,
      success: t.success,
      turns: t.turns.length,
      actions: t.actionCount,
      formatErrors: t.formatErrors,
      tokens,
      meanEntropy: mean(t.turns.flatMap((turn) => turn.response.entropies)) || 0,
      ...(withText.has(i) ? { text: transcript(t) } : {}),
    };
  });
}

/** `count` indices spread evenly over 0..n−1 (so the sample covers different groups). */
function spread(n: number, count: number): number[] {
  const k = Math.min(n, count);
  return Array.from({ length: k }, (_, i) => Math.floor((i * n) / k));
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

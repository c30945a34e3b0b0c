import { mean } from './algorithms/stats';
import type { EnvDefinition } from './envs/types';
import type { Tokenizer } from './policy/tokenizer';
import { ContextBuilder } from './rollout/context';
import { ResponsePolicy, RolloutSettings, Trajectory, rollout } from './rollout/engine';
import { evaluationSeed } from './seeds';

export interface Evaluation {
  episodes: number;
  success: number;
  meanReturn: number;
  formatValid: number;
  trajectories: Trajectory[];
}

/**
 * Success rate on the fixed held-out seeds 0..episodes−1 of the evaluation range, one episode
 * per seed, at the given temperature (0 = greedy).
 */
export async function evaluate(
  policy: ResponsePolicy,
  definition: EnvDefinition,
  envConfig: Record<string, unknown>,
  settings: RolloutSettings,
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  episodes: number,
): Promise<Evaluation> {
  const requests = Array.from({ length: episodes }, (_, i) => ({ seed: evaluationSeed(i), group: i, sample: 0 }));
  const trajectories = await rollout(policy, () => definition.create(envConfig), requests, tokenizer, contexts, settings);
  return {
    episodes,
    success: mean(trajectories.map((t) => (t.success ? 1 : 0))),
    meanReturn: mean(trajectories.map((t) => t.return)),
    formatValid: mean(trajectories.flatMap((t) => t.turns.map((turn) => (turn.penalised ? 0 : 1)))),
    trajectories,
  };
}

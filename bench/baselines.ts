import { FrozenLakeEnv } from '../src/training/envs/frozenlake';
import { optimalSuccessProbability } from '../src/training/envs/frozenlake-optimal';
import { getEnvDefinition } from '../src/training/envs/registry';
import { evaluate } from '../src/training/evaluate';
import { RandomFormatPolicy } from '../src/training/policy/policy';
import { contextsFor, tokenizerFor } from '../src/training/episode-io';
import { Rng } from '../src/training/random';
import { evaluationSeed } from '../src/training/seeds';
import type { JobSpec } from '../src/training/spec/validate';

/**
 * What a success rate means: a format-valid agent with uniformly random actions on the same
 * evaluation seeds and budgets, and (FrozenLake) the optimal policy's success by exact dynamic
 * programming over the same maps with the same action budget (feedback after every action, so
 * an upper bound for any agent that commits several actions per turn).
 */
const RANDOM_PASSES = 4;

export function baselines(spec: JobSpec): { random: number; optimal: number | null } {
  const definition = getEnvDefinition(spec.environment.id);
  const tokenizer = tokenizerFor(definition, spec);
  const contexts = contextsFor(tokenizer, spec);
  const shown = RandomFormatPolicy.environmentActions(tokenizer, definition);
  const policy = new RandomFormatPolicy(tokenizer, shown, spec.rollout.maxActionsPerTurn, spec.rollout.think, new Rng(7));
  // Several passes over the same seeds: the random agent's expected success on them.
  let random = 0;
  for (let pass = 0; pass < RANDOM_PASSES; pass++) random += evaluate(policy, definition, spec.environment.config, spec.rollout, tokenizer, contexts, spec.training.evalEpisodes).success / RANDOM_PASSES;
  let optimal: number | null = null;
  if (spec.environment.id === 'frozenlake') {
    let total = 0;
    for (let i = 0; i < spec.training.evalEpisodes; i++) {
      const env = definition.create(spec.environment.config) as FrozenLakeEnv;
      env.reset(evaluationSeed(i));
      total += optimalSuccessProbability(env, spec.rollout.maxActionsPerEpisode);
    }
    optimal = total / spec.training.evalEpisodes;
  }
  return { random, optimal };
}

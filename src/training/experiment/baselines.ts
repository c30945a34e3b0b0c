import type { FrozenLakeEnv } from '../envs/frozenlake';
import { optimalSuccessProbability } from '../envs/frozenlake-optimal';
import { getEnvDefinition } from '../envs/registry';
import type { EnvDefinition } from '../envs/types';
import { evaluate } from '../evaluate';
import { contextsFor, tokenizerFor } from '../episode-io';
import { RandomFormatPolicy } from '../policy/policy';
import { Rng } from '../random';
import { evaluationSeed } from '../seeds';
import type { JobSpec } from '../spec/validate';

/** Passes of the random agent over the same seeds: its expected success on them. */
const RANDOM_PASSES = 4;

/**
 * What a success rate means, on the job's evaluation seeds and budgets:
 * * `random`: a format-valid agent with uniformly random actions (the actions its current
 *   observation offers), averaged over several passes;
 * * `optimal`: FrozenLake's optimal policy by exact dynamic programming over the same maps with
 *   the actions the job's budgets allow, the episode's or its turns' (`actionBudget`), whichever
 *   is fewer (feedback after every action, so an upper bound for any agent that commits several
 *   actions per turn, and exact at one action a turn); null for environments without an exact
 *   optimum.
 */
export async function baselines(spec: JobSpec, definition: EnvDefinition = getEnvDefinition(spec.environment.id)): Promise<{ random: number; optimal: number | null }> {
  const tokenizer = tokenizerFor(definition, spec);
  const contexts = contextsFor(tokenizer, spec);
  const shown = RandomFormatPolicy.environmentActions(tokenizer, definition);
  const policy = new RandomFormatPolicy(tokenizer, shown, spec.rollout.maxActionsPerTurn, spec.rollout.think, new Rng(7));
  let random = 0;
  for (let pass = 0; pass < RANDOM_PASSES; pass++) random += (await evaluate(policy, definition, spec.environment.config, spec.rollout, tokenizer, contexts, spec.training.evalEpisodes)).success / RANDOM_PASSES;
  let optimal: number | null = null;
  if (spec.environment.id === 'frozenlake') {
    let total = 0;
    for (let i = 0; i < spec.training.evalEpisodes; i++) {
      const env = definition.create(spec.environment.config) as FrozenLakeEnv;
      env.reset(evaluationSeed(i));
      total += optimalSuccessProbability(env, actionBudget(spec.rollout));
    }
    optimal = total / spec.training.evalEpisodes;
  }
  return { random, optimal };
}

/** Actions an episode can take at most: 5 turns of one action each take 5, whatever the episode's 10. */
export function actionBudget(rollout: Pick<JobSpec['rollout'], 'maxTurns' | 'maxActionsPerTurn' | 'maxActionsPerEpisode'>): number {
  return Math.min(rollout.maxActionsPerEpisode, rollout.maxTurns * rollout.maxActionsPerTurn);
}

/**
 * The environment's expert (the demonstrations warm-up imitates it: a shortest path, a BFS
 * solver, the shortest chain of searches) played on the evaluation seeds within the job's
 * budgets, re-planning every turn and committing at most `maxActionsPerTurn` actions of its plan;
 * null where the environment has no expert.
 */
export async function expertSuccess(spec: JobSpec, definition: EnvDefinition = getEnvDefinition(spec.environment.id)): Promise<number | null> {
  const expert = definition.expert;
  if (!expert) return null;
  const { maxTurns, maxActionsPerTurn, maxActionsPerEpisode } = spec.rollout;
  let solved = 0;
  for (let i = 0; i < spec.training.evalEpisodes; i++) {
    const env = definition.create(spec.environment.config);
    await env.reset(evaluationSeed(i));
    let success = false;
    let actions = 0;
    for (let turn = 0; turn < maxTurns && actions < maxActionsPerEpisode && !env.done && !success; turn++) {
      const plan = (await expert(env)).slice(0, Math.min(maxActionsPerTurn, maxActionsPerEpisode - actions));
      if (plan.length === 0) break;
      for (const action of plan) {
        actions++;
        success = (await env.step(action)).info.success || success;
        if (env.done) break;
      }
    }
    if (success) solved++;
    await env.close?.();
  }
  return solved / spec.training.evalEpisodes;
}

/** A cell's references on its evaluation seeds: the random agent, and the optimum or else the expert. */
export interface References {
  random: number;
  optimal: number | null;
  expert: number | null;
}

export async function references(spec: JobSpec, definition?: EnvDefinition): Promise<References> {
  return { ...(await baselines(spec, definition)), expert: await expertSuccess(spec, definition) };
}

import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { LookupQaEnv } from './lookup-qa';
import { SokobanEnv } from './sokoban';
import { solveSokoban } from './sokoban-solver';
import type { Env, Expert } from './types';

/**
 * FrozenLake expert: the shortest path over frozen tiles from the player to the goal (BFS,
 * holes avoided), as the whole plan. On slippery ice the plan goes stale after a slip, so callers
 * re-plan every turn. [] when the episode is over or the goal is cut off.
 */
export const frozenLakeExpert: Expert = (env: Env) => {
  if (!(env instanceof FrozenLakeEnv)) throw new TypeError(`frozenLakeExpert needs a FrozenLakeEnv, got '${env.id}'`);
  if (env.done) return [];
  return shortestFrozenPath(env.state) ?? [];
};

/**
 * Sokoban expert: the BFS solver's shortest plan (in moves) from the current position, the
 * demonstrations RAGEN-style cold starts imitate. [] when solved or unsolvable (a box stuck).
 */
export const sokobanExpert: Expert = (env: Env) => {
  if (!(env instanceof SokobanEnv)) throw new TypeError(`sokobanExpert needs a SokobanEnv, got '${env.id}'`);
  if (env.done) return [];
  return solveSokoban(env.state) ?? [];
};

/**
 * lookup-qa expert: the shortest chain of searches, the question's entities from the start up to
 * the one before the answer (skipping those already searched in order), then the answer.
 * [] once the episode is over.
 */
export const lookupQaExpert: Expert = (env: Env) => {
  if (!(env instanceof LookupQaEnv)) throw new TypeError(`lookupQaExpert needs a LookupQaEnv, got '${env.id}'`);
  if (env.done) return [];
  const { graph, searched } = env.state;
  const chain = graph.question.chain;
  let known = 0;
  while (known < chain.length - 1 && searched.includes(chain[known])) known++;
  return [...chain.slice(known, -1).map((name) => `search[${name}]`), `answer[${chain[chain.length - 1]}]`];
};

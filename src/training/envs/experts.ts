import { FrozenLakeEnv, shortestFrozenPath } from './frozenlake';
import { LookupQaEnv } from './lookup-qa';
import { SokobanEnv } from './sokoban';
import { solveSokoban } from './sokoban-solver';
import { turnOptimalActions } from './frozenlake-optimal';
import type { Env, Expert, TurnExpert } from './types';

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
 * The most actions a turn of the slippery lake's demonstrations commits to. bench:frozenlake-optimum
 * (slippery 4×4, 5 turns, 10 actions, 256 evaluation seeds): the best turn-structured policy
 * succeeds 48.1% with at most 2 actions a turn against 49.6% with 5, and 2 keeps the solve to a
 * millisecond or so a map.
 */
export const FROZEN_LAKE_TURN_EXPERT_ACTIONS = 2;

/**
 * FrozenLake's turn expert. On slippery ice the shortest path ignores slips, and spread over the
 * turns it solves 25.8% of the evaluation maps; the best policy that sees the lake only between
 * turns solves 48.1% (at most 2 actions a turn): its turn is the demonstration
 * (turnOptimalActions). Non-slippery ice, or no sequence that can reach the goal: null, the
 * shortest path spread over the turns (which solves every reachable map).
 */
export const frozenLakeTurnExpert: TurnExpert = (env, turn) => {
  if (!(env instanceof FrozenLakeEnv)) throw new TypeError(`frozenLakeTurnExpert needs a FrozenLakeEnv, got '${env.id}'`);
  if (env.done || !env.config.slippery) return null;
  const actions = turnOptimalActions(env, { ...turn, actionsPerTurn: Math.min(turn.actionsPerTurn, FROZEN_LAKE_TURN_EXPERT_ACTIONS) });
  return actions.length > 0 ? actions : null;
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
  const chain = env.state.graph.question.chain;
  const known = chainSearched(env);
  return [...chain.slice(known, -1).map((name) => `search[${name}]`), `answer[${chain[chain.length - 1]}]`];
};

/** How many of the question's chain the episode has searched in order (the expert's progress). */
function chainSearched(env: LookupQaEnv): number {
  const { graph, searched } = env.state;
  const chain = graph.question.chain;
  let known = 0;
  while (known < chain.length - 1 && searched.includes(chain[known])) known++;
  return known;
}

/**
 * lookup-qa expert's thought for the turn its next call plays: the relation just followed, the
 * entity it led to (the one the call names) and the relation to follow from there, none before
 * the answer; on the first turn, the question's start and its first relation. Written so that
 * each word is one short lookup for a small model: the previous thought's last word, the fact
 * that word names in the search result shown, and the question's word two to the left of it
 * ("mentor of rival of Zorvek ?": `Zorvek rival`, then `rival Brask mentor`, then `mentor Velka`
 * and `answer[Velka]`). null once the episode is over.
 */
export const lookupQaExpertThought = (env: Env): string | null => {
  if (!(env instanceof LookupQaEnv)) throw new TypeError(`lookupQaExpertThought needs a LookupQaEnv, got '${env.id}'`);
  if (env.done) return null;
  const { relations, chain } = env.state.graph.question;
  const known = chainSearched(env);
  if (known === 0) return `${chain[0]} ${relations[0]}`;
  return [relations[known - 1], chain[known], ...(known < relations.length ? [relations[known]] : [])].join(' ');
};

/**
 * bench/frozenlake-optimum: what the best policy can reach on FrozenLake's evaluation seeds under
 * the job's turn structure, beside the expert the demonstrations warm-up imitates. The optimum
 * bench/learning prints (optimalSuccessProbability) observes the lake after every action; an
 * agent under RAGEN's interface sees it only between turns, and its actions within a turn run
 * blind (turnOptimalSuccessProbability). On slippery ice the difference is what a slip mid-turn
 * costs; a goal above the turn-structured optimum cannot be reached by any policy.
 *
 *   npm run bench:frozenlake-optimum -- [--config '{"slippery":true}'] [--episodes 256]
 */
import { parseArgs } from 'node:util';
import { expertSuccess } from '../src/training/experiment/baselines';
import { getEnvDefinition } from '../src/training/envs/registry';
import { FrozenLakeEnv, shortestFrozenPath } from '../src/training/envs/frozenlake';
import { GRID_ACTIONS } from '../src/training/envs/grid';
import { optimalSuccessProbability, transitionTable, turnOptimalSuccessProbability } from '../src/training/envs/frozenlake-optimal';
import { evaluationSeed } from '../src/training/seeds';
import { parseJobSpec } from '../src/training/spec/validate';
import type { TurnBudget } from '../src/training/envs/types';
import { expertActions, spreadPlan } from '../src/training/warmup';

/**
 * Exact success probability of re-planning the shortest path (holes avoided, slips ignored) after
 * every action, with `budget` observed actions: the fixed policy's value, V_k(s) = Σ_s' P(s' | s,
 * π(s)) · V_{k−1}(s'), where π(s) is the first move of the shortest path from s.
 */
function replannedShortestPath(env: FrozenLakeEnv, budget: number): number {
  const lake = env.state;
  const cells = lake.width * lake.height;
  const successors = transitionTable(lake, env.config.slippery);
  const landings = Array.from({ length: cells }, (_, cell) => {
    const move = shortestFrozenPath({ ...lake, player: cell })?.[0];
    return move === undefined ? [cell] : successors[cell][GRID_ACTIONS.indexOf(move)];
  });
  let value = new Float64Array(cells);
  value[lake.goal] = 1;
  for (let k = 1; k <= budget; k++) {
    const next = new Float64Array(cells);
    next[lake.goal] = 1;
    for (let cell = 0; cell < cells; cell++) {
      if (cell === lake.goal || lake.holes[cell]) continue;
      next[cell] = landings[cell].reduce((sum, target) => sum + value[target], 0) / landings[cell].length;
    }
    value = next;
  }
  return value[lake.player];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string', default: '{"slippery":true}' }, episodes: { type: 'string', default: '256' } } });
  const config = JSON.parse(values.config!) as Record<string, unknown>;
  const spec = parseJobSpec({ name: 'frozenlake-optimum', environment: { id: 'frozenlake', config }, algorithm: { id: 'starpo-s' }, training: { evalEpisodes: Number(values.episodes), evalTemperature: 0.5 } });
  const { maxTurns, maxActionsPerTurn, maxActionsPerEpisode } = spec.rollout;
  const mean = async (value: (env: FrozenLakeEnv) => number | Promise<number>) => {
    let total = 0;
    for (let i = 0; i < spec.training.evalEpisodes; i++) {
      const env = new FrozenLakeEnv(spec.environment.config);
      env.reset(evaluationSeed(i));
      total += await value(env);
    }
    return (100 * total) / spec.training.evalEpisodes;
  };
  // A policy that picks each turn's actions from the turns and actions left, played as the warm-up plays the demonstrations.
  const definition = getEnvDefinition('frozenlake');
  const played = (policy: (env: FrozenLakeEnv, turn: TurnBudget) => Promise<string[]>) => async (env: FrozenLakeEnv) => {
    let actionsLeft = maxActionsPerEpisode;
    for (let turn = 0; turn < maxTurns && !env.done && actionsLeft > 0; turn++) {
      const actions = await policy(env, { turns: maxTurns - turn, actionsPerTurn: maxActionsPerTurn, actions: actionsLeft });
      if (actions.length === 0) break;
      for (const action of actions) {
        if (env.done) break;
        if (env.step(action).info.success) return 1;
        actionsLeft--;
      }
    }
    return 0;
  };
  const demonstrations = played((env, turn) => expertActions(definition, env, turn));
  const spreadShortestPath = played(async (env, turn) => spreadPlan(await definition.expert!(env), turn));
  const rows: [string, number][] = [
    ['the demonstrations (expertActions): on slippery ice the turn expert, else the shortest path spread over the turns left', await mean(demonstrations)],
    ['the shortest path (holes avoided, slips ignored) spread over the turns left, re-planned each turn (the demonstrations until the turn expert)', await mean(spreadShortestPath)],
    ["the expert as the tables' reference plays it: up to a turn's actions of its plan, re-planned each turn", 100 * (await expertSuccess(spec))!],
    [`one observed action a turn (${Math.min(maxTurns, maxActionsPerEpisode)} actions)`, await mean((env) => optimalSuccessProbability(env, Math.min(maxTurns, maxActionsPerEpisode)))],
    [`the turn structure: ${maxTurns} turns of at most ${maxActionsPerTurn} blind actions, ${maxActionsPerEpisode} in all`, await mean((env) => turnOptimalSuccessProbability(env, { turns: maxTurns, actionsPerTurn: maxActionsPerTurn, actions: maxActionsPerEpisode }))],
    // The turn expert's own value: the same optimum over sequences of at most 2 actions.
    [`the turn structure with at most 2 actions a turn (the turn expert)`, await mean((env) => turnOptimalSuccessProbability(env, { turns: maxTurns, actionsPerTurn: Math.min(2, maxActionsPerTurn), actions: maxActionsPerEpisode }))],
    // What an agent that learned only the shortest path reaches with one action a turn and as many turns as actions.
    [`the shortest path re-planned after every action (${maxActionsPerEpisode} observed actions)`, await mean((env) => replannedShortestPath(env, maxActionsPerEpisode))],
    [`every action observed (${maxActionsPerEpisode} actions; bench/learning's "optimum")`, await mean((env) => optimalSuccessProbability(env, maxActionsPerEpisode))],
  ];
  console.log(`FrozenLake ${JSON.stringify(spec.environment.config)}, ${spec.training.evalEpisodes} evaluation seeds: success (%)\n`);
  console.log('| policy | success |\n|---|---|');
  for (const [label, value] of rows) console.log(`| ${label} | ${value.toFixed(1)} |`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

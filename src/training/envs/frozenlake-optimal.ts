import { FrozenLakeEnv, type FrozenLakeState } from './frozenlake';
import { GRID_ACTIONS, type GridAction, neighbourCell, slipOutcomes } from './grid';

/**
 * Success probability of the optimal policy on the env's lake from the player's current tile,
 * given `actionBudget` single actions with feedback after each one (finite-horizon value
 * iteration, Bellman 1957):
 *
 *   V_0(s) = 1 if s is the goal, else 0
 *   V_k(s) = max_a Σ_s' P(s' | s, a) · V_{k−1}(s')     (goal and holes absorbing)
 *
 * with P from the env's dynamics (slippery: 1/3 for the intended and each perpendicular move;
 * off-grid moves stay). Benchmarks print it as the ceiling a learned policy can reach on the
 * same maps. Call it on a freshly reset env to get the episode's optimum.
 */
export function optimalSuccessProbability(env: FrozenLakeEnv, actionBudget: number): number {
  if (!Number.isInteger(actionBudget) || actionBudget < 0) {
    throw new RangeError(`actionBudget must be a non-negative integer, got ${actionBudget}`);
  }
  const lake = env.state;
  const successors = transitionTable(lake, env.config.slippery);
  const cells = lake.width * lake.height;
  let value = new Float64Array(cells);
  value[lake.goal] = 1;
  for (let k = 1; k <= actionBudget; k++) {
    const next = new Float64Array(cells);
    for (let cell = 0; cell < cells; cell++) {
      if (cell === lake.goal) next[cell] = 1;
      if (cell === lake.goal || lake.holes[cell]) continue;
      let best = 0;
      for (const outcomes of successors[cell]) {
        let expected = 0;
        for (const target of outcomes) expected += value[target];
        best = Math.max(best, expected / outcomes.length);
      }
      next[cell] = best;
    }
    value = next;
  }
  return value[lake.player];
}

/** successors[cell][action] = the equally likely landing cells (3 when slippery, else 1). */
function transitionTable(lake: FrozenLakeState, slippery: boolean): number[][][] {
  const land = (cell: number, move: GridAction) => {
    const next = neighbourCell(cell, move, lake.width, lake.height);
    return next < 0 ? cell : next;
  };
  const outcomes = (cell: number, action: GridAction) =>
    slippery ? slipOutcomes(action).map((move) => land(cell, move)) : [land(cell, action)];
  return Array.from({ length: lake.width * lake.height }, (_, cell) =>
    GRID_ACTIONS.map((action) => outcomes(cell, action)),
  );
}

/** The turn structure of an episode: observations come only between turns. */
export interface TurnBudget {
  turns: number;
  actionsPerTurn: number;
  actions: number;
}

/**
 * Success probability of the best policy that sees the lake only between turns, as an agent
 * under RAGEN's interface does: each turn it commits to 1..`actionsPerTurn` actions, which run
 * blind (a slip mid-turn is seen only next turn; a hole or the goal ends the episode and the
 * turn's remaining actions are dropped), at most `actions` in the episode. Value iteration over
 * turns, a turn's choice being any open-loop sequence:
 *
 *   W_0(s, a) = 0;  W_t(s, a) = max over sequences q, 1 ≤ |q| ≤ min(actionsPerTurn, a), of
 *                   P(goal during q | s) + Σ_s' P(s' after q, no hole or goal | s) · W_{t−1}(s', a − |q|)
 *
 * It lies between optimalSuccessProbability(env, min(turns, actions)) (one observed action a
 * turn) and optimalSuccessProbability(env, actions) (every action observed).
 */
export function turnOptimalSuccessProbability(env: FrozenLakeEnv, budget: TurnBudget): number {
  const { turns, actionsPerTurn, actions } = budget;
  for (const [name, value] of Object.entries(budget)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const lake = env.state;
  if (lake.player === lake.goal) return 1;
  const successors = transitionTable(lake, env.config.slippery);
  const cells = lake.width * lake.height;
  // value[a][cell]: W_{t−1}(cell, a) for the previous turn count.
  let value = Array.from({ length: actions + 1 }, () => new Float64Array(cells));
  for (let t = 1; t <= turns; t++) {
    const next = Array.from({ length: actions + 1 }, () => new Float64Array(cells));
    for (let start = 0; start < cells; start++) {
      if (start === lake.goal || lake.holes[start]) continue;
      // Depth-first over the turn's sequences; each prefix of length k ≥ 1 is scored for every a ≥ k.
      const visit = (distribution: Float64Array, reached: number, k: number) => {
        if (k > 0) {
          for (let a = k; a <= actions; a++) {
            let score = reached;
            for (let cell = 0; cell < cells; cell++) score += distribution[cell] * value[a - k][cell];
            next[a][start] = Math.max(next[a][start], score);
          }
        }
        if (k === Math.min(actionsPerTurn, actions)) return;
        for (let action = 0; action < GRID_ACTIONS.length; action++) {
          const moved = new Float64Array(cells);
          let goal = reached;
          for (let cell = 0; cell < cells; cell++) {
            if (distribution[cell] === 0) continue;
            const outcomes = successors[cell][action];
            const share = distribution[cell] / outcomes.length;
            for (const target of outcomes) {
              if (target === lake.goal) goal += share;
              else if (!lake.holes[target]) moved[target] += share;
            }
          }
          visit(moved, goal, k + 1);
        }
      };
      const here = new Float64Array(cells);
      here[start] = 1;
      visit(here, 0, 0);
    }
    value = next;
  }
  return value[actions][lake.player];
}

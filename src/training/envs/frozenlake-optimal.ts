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

import { FrozenLakeEnv, type FrozenLakeState } from './frozenlake';
import { GRID_ACTIONS, type GridAction, neighbourCell, slipOutcomes } from './grid';
import type { TurnBudget } from './types';

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

/** successors[cell][action] = the equally likely landing cells (3 when slippery, else 1), actions indexed as GRID_ACTIONS. */
export function transitionTable(lake: FrozenLakeState, slippery: boolean): number[][][] {
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

/**
 * One turn's open-loop sequence from a start cell: its actions (indices into GRID_ACTIONS), the
 * probability it reaches the goal, and where it leaves the player otherwise (mass that falls into
 * a hole drops out).
 */
interface TurnOutcome {
  actions: number[];
  goal: number;
  cells: number[];
  probabilities: number[];
}

/** outcomes[cell]: every sequence of 1..maxLength actions from the cell, shorter ones first. */
function turnOutcomes(lake: FrozenLakeState, successors: number[][][], maxLength: number): TurnOutcome[][] {
  const cells = lake.width * lake.height;
  return Array.from({ length: cells }, (_, start) => {
    if (start === lake.goal || lake.holes[start]) return [];
    const outcomes: TurnOutcome[] = [];
    const here = new Float64Array(cells);
    here[start] = 1;
    let frontier = [{ actions: [] as number[], goal: 0, distribution: here }];
    for (let k = 1; k <= maxLength; k++) {
      const longer = frontier.flatMap(({ actions, goal, distribution }) =>
        GRID_ACTIONS.map((_, action) => {
          const moved = new Float64Array(cells);
          let reached = goal;
          for (let cell = 0; cell < cells; cell++) {
            if (distribution[cell] === 0) continue;
            const landings = successors[cell][action];
            const share = distribution[cell] / landings.length;
            for (const target of landings) {
              if (target === lake.goal) reached += share;
              else if (!lake.holes[target]) moved[target] += share;
            }
          }
          return { actions: [...actions, action], goal: reached, distribution: moved };
        }),
      );
      for (const { actions, goal, distribution } of longer) {
        const occupied = [...distribution.keys()].filter((cell) => distribution[cell] > 0);
        outcomes.push({ actions, goal, cells: occupied, probabilities: occupied.map((cell) => distribution[cell]) });
      }
      frontier = longer;
    }
    return outcomes;
  });
}

/** The best turn-structured policy on one lake: values W_t(cell, a) and the turn that attains each. */
interface TurnPolicy {
  budget: TurnBudget;
  outcomes: TurnOutcome[][];
  /** value[t][a][cell] = W_t(cell, a). */
  value: Float64Array[][];
  /** choice[t][a][cell]: the index in outcomes[cell] of the best turn; −1 where no turn can reach the goal. */
  choice: Int32Array[][];
}

/** Scores that differ by less than this are ties, which go to the shorter (then earlier) sequence. */
const TIE = 1e-12;

function solveTurns(lake: FrozenLakeState, slippery: boolean, budget: TurnBudget): TurnPolicy {
  const { turns, actionsPerTurn, actions } = budget;
  for (const [name, value] of Object.entries(budget)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const cells = lake.width * lake.height;
  const outcomes = turnOutcomes(lake, transitionTable(lake, slippery), Math.min(actionsPerTurn, actions));
  const table = <T>(make: () => T) => Array.from({ length: turns + 1 }, () => Array.from({ length: actions + 1 }, make));
  const value = table(() => new Float64Array(cells));
  const choice = table(() => new Int32Array(cells).fill(-1));
  for (let t = 1; t <= turns; t++) {
    for (let a = 1; a <= actions; a++) {
      for (let cell = 0; cell < cells; cell++) {
        let best = 0;
        outcomes[cell].forEach((turn, index) => {
          const left = a - turn.actions.length;
          if (left < 0) return;
          let score = turn.goal;
          for (let i = 0; i < turn.cells.length; i++) score += turn.probabilities[i] * value[t - 1][left][turn.cells[i]];
          if (score > best + TIE) {
            best = score;
            choice[t][a][cell] = index;
          }
        });
        value[t][a][cell] = best;
      }
    }
  }
  return { budget, outcomes, value, choice };
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
  const policy = solveTurns(env.state, env.config.slippery, budget);
  const lake = env.state;
  return lake.player === lake.goal ? 1 : policy.value[budget.turns][budget.actions][lake.player];
}

/** The last lake solved, so that an episode's turns share its tables (the warm-up plays episodes one at a time). */
let lastPolicy: { key: string; policy: TurnPolicy } | null = null;

/**
 * The actions of this turn under the policy turnOptimalSuccessProbability scores, given the turns
 * and actions left (`budget`) on the env's lake; [] when the episode is over or no sequence can
 * reach the goal in the budget. Ties go to the shorter sequence. One solve per lake and
 * actionsPerTurn: later turns of the same episode read the tables already built.
 */
export function turnOptimalActions(env: FrozenLakeEnv, budget: TurnBudget): GridAction[] {
  if (env.done) return [];
  const lake = env.state;
  const key = JSON.stringify([lake.width, lake.height, lake.holes, lake.goal, env.config.slippery, budget.actionsPerTurn]);
  const cached = lastPolicy?.key === key && lastPolicy.policy.budget.turns >= budget.turns && lastPolicy.policy.budget.actions >= budget.actions ? lastPolicy.policy : null;
  const policy = cached ?? solveTurns(lake, env.config.slippery, budget);
  lastPolicy = { key, policy };
  const index = policy.choice[budget.turns][budget.actions][lake.player];
  return index < 0 ? [] : policy.outcomes[lake.player][index].actions.map((action) => GRID_ACTIONS[action]);
}

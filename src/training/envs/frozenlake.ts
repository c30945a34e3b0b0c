import { Type, type Static } from '@sinclair/typebox';
import { Rng } from '../random';
import { EnvNotResetError, EpisodeDoneError, invalidActionResult, matchAction, resolveEnvConfig } from './common';
import { GRID_ACTIONS, type GridAction, neighbourCell, renderGrid, slipOutcomes } from './grid';
import type { Env, StepResult } from './types';

/** TypeBox schema of the FrozenLake config (RAGEN: size 4, p 0.8, slippery). */
export const FrozenLakeConfigSchema = Type.Object(
  {
    size: Type.Optional(
      Type.Integer({ default: 4, minimum: 3, maximum: 8, description: 'Side N of the N×N lake' }),
    ),
    frozenProb: Type.Optional(
      Type.Number({
        default: 0.8,
        minimum: 0.5,
        maximum: 1,
        description: 'Probability that a tile is frozen (walkable); the others are holes',
      }),
    ),
    slippery: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'Intended move with probability 1/3, each perpendicular move 1/3 (gym is_slippery)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A complete FrozenLake config (every field resolved). */
export type FrozenLakeConfig = Required<Static<typeof FrozenLakeConfigSchema>>;

/** RAGEN's defaults: 4×4, 80% frozen, slippery. */
export const FROZEN_LAKE_DEFAULTS: FrozenLakeConfig = { size: 4, frozenProb: 0.8, slippery: true };

/** RAGEN's FrozenLake symbols. */
export const FROZEN_LAKE_LEGEND: Readonly<Record<string, string>> = {
  P: 'player',
  _: 'frozen tile',
  O: 'hole',
  G: 'goal',
  X: 'player fell into a hole',
  '√': 'player on the goal',
};

/** Observation tokens: the single-character symbols and the row break. */
export const FROZEN_LAKE_VOCABULARY: readonly string[] = [...Object.keys(FROZEN_LAKE_LEGEND), '\n'];

/**
 * One lake and the player on it. Cells are row-major indices. Immutable: `step` replaces it, so
 * `clone()` and the `state` accessor can share it safely.
 */
export interface FrozenLakeState {
  readonly width: number;
  readonly height: number;
  readonly holes: readonly boolean[];
  readonly start: number;
  readonly goal: number;
  readonly player: number;
}

/** Rng streams: the map and the slips are independent draws from the same seed. */
const MAP_STREAM = 201;
const SLIP_STREAM = 202;
/** Reachable maps are common (p ≥ 0.5); the cap only turns a bug into an error. */
const MAX_MAP_ATTEMPTS = 100_000;

/**
 * Shortest path over frozen tiles (BFS, holes avoided) from `from` (default: the player) to the
 * goal, as action names; null when the goal cannot be reached. Ignores slipping.
 */
export function shortestFrozenPath(state: FrozenLakeState, from = state.player): GridAction[] | null {
  const { width, height, holes, goal } = state;
  const cameBy = new Map<number, { previous: number; action: GridAction }>();
  const queue = [from];
  const seen = new Set([from]);
  for (let head = 0; head < queue.length; head++) {
    const cell = queue[head];
    if (cell === goal) {
      const plan: GridAction[] = [];
      for (let at = cell; at !== from; ) {
        const step = cameBy.get(at)!;
        plan.push(step.action);
        at = step.previous;
      }
      return plan.reverse();
    }
    if (holes[cell]) continue;
    for (const action of GRID_ACTIONS) {
      const next = neighbourCell(cell, action, width, height);
      if (next < 0 || seen.has(next) || holes[next]) continue;
      seen.add(next);
      cameBy.set(next, { previous: cell, action });
      queue.push(next);
    }
  }
  return null;
}

/**
 * RAGEN's random lake (gym `generate_random_map` with a random start and goal): every tile frozen
 * with probability `frozenProb`, start and goal distinct frozen tiles, resampled until the goal
 * is reachable from the start.
 */
export function generateFrozenLake(size: number, frozenProb: number, rng: Rng): FrozenLakeState {
  const cells = size * size;
  for (let attempt = 0; attempt < MAX_MAP_ATTEMPTS; attempt++) {
    const holes = Array.from({ length: cells }, () => rng.next() >= frozenProb);
    const start = rng.int(cells);
    const goal = (start + 1 + rng.int(cells - 1)) % cells;
    holes[start] = false;
    holes[goal] = false;
    const lake = { width: size, height: size, holes, start, goal, player: start };
    if (shortestFrozenPath(lake) !== null) return lake;
  }
  throw new Error(`frozenlake: no reachable ${size}×${size} map in ${MAX_MAP_ATTEMPTS} attempts`);
}

/** Parses a hand-drawn lake (`P` start, `G` goal, `_` frozen, `O` hole; rows of equal length). */
export function parseFrozenLake(rows: readonly string[]): FrozenLakeState {
  const height = rows.length;
  const width = rows[0]?.length ?? 0;
  const holes: boolean[] = [];
  let start = -1;
  let goal = -1;
  rows.forEach((line, row) => {
    if (line.length !== width) throw new Error(`frozenlake: row ${row} has ${line.length} tiles, expected ${width}`);
    [...line].forEach((symbol, col) => {
      if (!'P_OG'.includes(symbol)) throw new Error(`frozenlake: unknown tile '${symbol}'`);
      if (symbol === 'P') start = row * width + col;
      if (symbol === 'G') goal = row * width + col;
      holes.push(symbol === 'O');
    });
  });
  if (start < 0 || goal < 0) throw new Error('frozenlake: a map needs one P and one G');
  return { width, height, holes, start, goal, player: start };
}

/**
 * FrozenLake as in RAGEN (after gym's FrozenLake-v1): walk from the start to the goal over
 * frozen tiles without falling into a hole. Slippery ice realises the intended move with
 * probability 1/3 and each perpendicular move with 1/3; a move off the grid leaves the player in
 * place (actionEffective false). Reward +1 on reaching the goal (done, success); a hole ends the
 * episode with reward 0; otherwise 0.
 *
 * render(): rows of `P _ O G X √` joined by "\n". `step()` after the episode ended throws
 * `EpisodeDoneError`; an unknown action is not executed (actionValid false, reward 0).
 */
export class FrozenLakeEnv implements Env {
  readonly id = 'frozenlake';
  readonly actionNames = GRID_ACTIONS;
  readonly symbolLegend = FROZEN_LAKE_LEGEND;
  readonly vocabulary = FROZEN_LAKE_VOCABULARY;
  readonly config: FrozenLakeConfig;
  private lake: FrozenLakeState | null = null;
  private slipRng = new Rng(0, SLIP_STREAM);
  private realised: GridAction | null = null;

  constructor(config: Partial<FrozenLakeConfig> = {}) {
    this.config = resolveEnvConfig('frozenlake', FrozenLakeConfigSchema, FROZEN_LAKE_DEFAULTS, config);
  }

  /** The current lake and player (for experts and the optimal-policy DP). */
  get state(): FrozenLakeState {
    if (!this.lake) throw new EnvNotResetError(this.id);
    return this.lake;
  }

  get done(): boolean {
    return this.lake !== null && (this.lake.holes[this.lake.player] || this.lake.player === this.lake.goal);
  }

  /** The move the ice actually made on the last step (after slipping); null before any step. */
  get lastRealisedMove(): GridAction | null {
    return this.realised;
  }

  reset(seed: number): string {
    return this.start(generateFrozenLake(this.config.size, this.config.frozenProb, new Rng(seed, MAP_STREAM)), seed);
  }

  /** Starts an episode on a hand-drawn lake (tests, curated levels); `seed` drives the slips. */
  resetToMap(rows: readonly string[], seed: number): string {
    return this.start(parseFrozenLake(rows), seed);
  }

  step(action: string): StepResult {
    const lake = this.state;
    if (this.done) throw new EpisodeDoneError(this.id);
    const intended = matchAction(action, GRID_ACTIONS);
    if (intended === undefined) {
      return invalidActionResult(this.render());
    }
    const move = this.config.slippery ? slipOutcomes(intended)[this.slipRng.int(3)] : intended;
    const next = neighbourCell(lake.player, move, lake.width, lake.height);
    this.realised = move;
    if (next >= 0) this.lake = { ...lake, player: next };
    const success = next === lake.goal;
    return {
      observation: this.render(),
      reward: success ? 1 : 0,
      done: this.done,
      info: { success, actionValid: true, actionEffective: next >= 0 },
    };
  }

  render(): string {
    const { width, height, holes, goal, player } = this.state;
    return renderGrid(width, height, (cell) => {
      if (cell === player) return holes[cell] ? 'X' : cell === goal ? '√' : 'P';
      return cell === goal ? 'G' : holes[cell] ? 'O' : '_';
    });
  }

  clone(branchSeed?: number): FrozenLakeEnv {
    const copy = new FrozenLakeEnv(this.config);
    copy.lake = this.lake;
    copy.slipRng = branchSeed === undefined ? Rng.fromState(this.slipRng.getState()) : new Rng(branchSeed, SLIP_STREAM);
    copy.realised = this.realised;
    return copy;
  }

  private start(lake: FrozenLakeState, seed: number): string {
    this.lake = lake;
    this.slipRng = new Rng(seed, SLIP_STREAM);
    this.realised = null;
    return this.render();
  }
}

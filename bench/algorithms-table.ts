/**
 * The algorithms table: its rows (environments with their budget and warm-up), its columns (one
 * preset each) and how a run is keyed. Every run is the job a user gets from `environment.id`
 * and `algorithm.id` with the row's settings and nothing else, so every column trains with the
 * same seeds, trajectories per prompt (the default 8 groups × 16), steps, warm-up and evaluation.
 */
import { ALGORITHM_PRESETS } from '../src/training/algorithms/presets';
import { RAGEN_PROTOCOL } from './learning-table';
import { BenchRow, resultId } from './runs';

/** Bump when the training code changes what a run measures: stored results then no longer match. */
export const ALGORITHMS_REVISION = 1;

export interface Row extends BenchRow {
  /** `training.warmup` over the job's default, for every run in the row ({}: the default). */
  warmup: Record<string, unknown>;
  /** `model.config` over the job's default, where the row pins the model its runs were trained with. */
  model?: Record<string, unknown>;
}

/**
 * Both rows warm up from demonstrations (both have an expert), the cold-start SFT model ARPO and
 * AEPO begin from. lookup-qa's is pinned to the recipe its 18 runs were trained with, 400
 * imitation steps without the token shift (src/training/spec/recipes.ts now imitates 3,200 with
 * it, and bench/learning's lookup-qa row trains that default job). FrozenLake's is pinned to 3,200 imitation steps, the recipe
 * when its 18 runs were trained: the recipe now imitates 10,000, and the comparison of presets
 * needs one warm-up for all of them, not the newest. 150 steps were not enough: after them
 * neither policy had learnt its task (seed 1, eval success: lookup-qa 3.9% against the random
 * agent's 4.0%, FrozenLake 13.3% against 21.6%); after 400 both had (16.8% and 57.4%). 100 RL
 * steps is bench/learning's budget.
 */
export const ROWS: readonly Row[] = [
  { name: 'lookup-qa', label: 'lookup-qa (default config), after 400 imitation steps without the token shift', env: 'lookup-qa', envConfig: {}, steps: 100, warmup: { steps: 400, curriculumShare: 0 }, model: { tokenShift: false } },
  { name: 'frozenlake', label: 'FrozenLake 4×4, not slippery, after 3,200 imitation steps', env: 'frozenlake', envConfig: { slippery: false }, steps: 100, warmup: { steps: 3200 } },
];

export interface Column {
  /** The preset id, as `--columns` names it. */
  name: string;
  label: string;
}

/** Columns in the order the claims read them; `arpo` and `aepo` count only once their presets exist. */
export const COLUMNS: readonly Column[] = [
  { name: 'starpo-grpo', label: 'GRPO' },
  { name: 'dapo', label: 'DAPO' },
  { name: 'gigpo', label: 'GiGPO' },
  { name: 'arpo', label: 'ARPO' },
  { name: 'aepo', label: 'AEPO' },
  { name: 'starpo-s', label: 'StarPO-S' },
];

export const SEEDS: readonly number[] = [1, 2, 3];

/** Whether this code has the column's preset (a preset still being built is skipped and shown "–"). */
export function available(column: Column): boolean {
  return Object.prototype.hasOwnProperty.call(ALGORITHM_PRESETS, column.name);
}

export interface RunKey {
  revision: number;
  env: string;
  envConfig: Record<string, unknown>;
  warmup: Record<string, unknown>;
  model?: Record<string, unknown>;
  preset: string;
  seed: number;
  steps: number;
  /** The evaluation protocol (RAGEN's: 256 seeds at temperature 0.5), as bench/learning's. */
  protocol: { evalEpisodes: number; evalTemperature: number };
}

/** `steps` replaces the row's budget (a smoke run); it is part of the key, so such runs never pass for the table's. */
export function runKey(row: Row, column: Column, seed: number, steps = row.steps): RunKey {
  return { revision: ALGORITHMS_REVISION, env: row.env, envConfig: row.envConfig, warmup: row.warmup, ...(row.model ? { model: row.model } : {}), preset: column.name, seed, steps, protocol: RAGEN_PROTOCOL };
}

/** The job a run trains: the defaults, plus the row's environment, warm-up and budget, and the column's preset. */
export function specOf(key: RunKey): Record<string, unknown> {
  return {
    name: `bench-algorithms-${key.env}-${key.preset}-s${key.seed}`,
    environment: { id: key.env, config: key.envConfig },
    algorithm: { id: key.preset },
    ...(key.model ? { model: { config: key.model } } : {}),
    training: { steps: key.steps, seed: key.seed, checkpointEvery: 0, ...(Object.keys(key.warmup).length > 0 ? { warmup: key.warmup } : {}), ...key.protocol },
  };
}

/** The identity of a stored result: the key and a digest of the resolved spec it trains (bench/runs.ts). */
export function keyId(key: RunKey): string {
  return resultId(key, specOf(key));
}

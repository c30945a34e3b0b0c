/**
 * The like-for-like learning table: its rows (environments with their budget), its columns
 * (warm-up kind, preset, the overrides the cell names, seeds) and how a run is keyed. Every run
 * is the job a user gets from `environment.id` and `algorithm.id` plus only the column's
 * overrides, so the table shows what the service does by default.
 */

import { BenchRow, Dormant, resultId } from './runs';

/** Bump when the training code changes what a run measures: stored results then no longer match. */
export const LEARNING_REVISION = 1;

/** RAGEN (Wang et al. 2025) StarPO-S with Qwen2.5-0.5B-Instruct, success on its validation seeds. */
export const RAGEN_STARPO_S: Readonly<Record<string, number>> = { bandit: 1.0, sokoban: 0.203, 'frozenlake-slippery': 0.218 };

/** A row's budget: RAGEN's is 200 steps of 8×16 rollouts. */
export interface Row extends BenchRow {
  hasExpert: boolean;
}

export const ROWS: readonly Row[] = [
  { name: 'bandit', label: 'Bandit', env: 'bandit', envConfig: {}, steps: 100, hasExpert: false },
  { name: 'sokoban', label: 'Sokoban 6×6 (RAGEN rooms)', env: 'sokoban', envConfig: {}, steps: 100, hasExpert: true },
  { name: 'frozenlake-slippery', label: 'FrozenLake 4×4, slippery', env: 'frozenlake', envConfig: { slippery: true }, steps: 100, hasExpert: true },
  { name: 'frozenlake', label: 'FrozenLake 4×4, not slippery', env: 'frozenlake', envConfig: { slippery: false }, steps: 100, hasExpert: true },
];

export type Warmup = 'format' | 'demonstrations';

export interface Column {
  name: string;
  label: string;
  warmup: Warmup;
  preset: string;
  /** Spec sections merged over the defaults (the only thing that differs from a default job). */
  overrides: Record<string, Record<string, unknown>>;
  seeds: readonly number[];
}

const THREE_SEEDS = [1, 2, 3];
const column = (warmup: Warmup, preset: string, seeds: readonly number[], suffix = '', overrides: Column['overrides'] = {}): Column => ({
  name: `${warmup}/${preset}${suffix ? `/${suffix}` : ''}`,
  label: `${preset}${suffix ? ` (${suffix})` : ''}`,
  warmup,
  preset,
  overrides,
  seeds,
});

/**
 * RAGEN's update, as the like-for-like cells and the levers measured on top of it ran: without
 * self-imitation, which the FrozenLake format recipe turns on (src/training/spec/recipes.ts).
 */
const RAGEN_UPDATE = { selfImitationSteps: 0 };
const withRagenUpdate = (overrides: Column['overrides'] = {}): Column['overrides'] => ({ ...overrides, algorithm: { ...RAGEN_UPDATE, ...overrides.algorithm } });
/** The format recipe's self-imitation (recipes.ts), named in full so it means the same on every row. */
const SELF_IMITATION = { selfImitationSteps: 16, selfImitationLearningRate: 0.003, selfImitationBufferSize: 2048 };

/**
 * The table's columns: each warm-up with the three presets under RAGEN's update; StarPO-S over
 * three seeds, also with <think>; then the levers for learning without an expert.
 */
export const COLUMNS: readonly Column[] = [
  ...(['format', 'demonstrations'] as const).flatMap((warmup) => {
    const update = warmup === 'format' ? withRagenUpdate : (overrides: Column['overrides'] = {}) => overrides;
    return [
      column(warmup, 'starpo-ppo', [1], '', update()),
      column(warmup, 'starpo-grpo', [1], '', update()),
      column(warmup, 'starpo-s', THREE_SEEDS, '', update()),
      column(warmup, 'starpo-s', THREE_SEEDS, 'think', update({ rollout: { think: true, maxTokensPerTurn: 24 } })),
    ];
  }),
  // Learning without an expert: levers on top of StarPO-S from the format warm-up.
  column('format', 'starpo-s', THREE_SEEDS, 'world model', withRagenUpdate({ algorithm: { worldModelCoef: 1 }, training: { warmup: { worldModelCoef: 1 } } })),
  column('format', 'starpo-s', THREE_SEEDS, 'world model in RL', withRagenUpdate({ algorithm: { worldModelCoef: 1 } })),
  // The same self-supervised loss given time to read the grid before RL: 1000 format warm-up
  // steps (random actions, no reward) instead of 150; the RL budget is the row's.
  column('format', 'starpo-s', THREE_SEEDS, 'world model 1000', withRagenUpdate({ algorithm: { worldModelCoef: 1 }, training: { warmup: { worldModelCoef: 1, steps: 1000 } } })),
  // Step-level credit: GiGPO's anchor-state advantages compare the actions taken from one state.
  column('format', 'gigpo', THREE_SEEDS, '', withRagenUpdate()),
  // More initial states per step on the same 128 episodes: StarPO-S keeps the top quarter of the
  // groups, so 8 × 16 updates on 2 maps a step, 32 × 4 on 8.
  column('format', 'starpo-s', THREE_SEEDS, '32x4', withRagenUpdate({ rollout: { groups: 32, groupSize: 4 } })),
  // Exploration: ten times RAGEN's entropy bonus of 0.001.
  column('format', 'starpo-s', THREE_SEEDS, 'entropy 0.01', withRagenUpdate({ algorithm: { entropyCoef: 0.01 } })),
  // Model size: the width that imitated FrozenLake best.
  column('format', 'starpo-s', THREE_SEEDS, 'd64', withRagenUpdate({ model: { dModel: 64, heads: 4 } })),
  // Self-imitation: the agent's own successful training episodes replayed as supervised examples
  // after each update, 2, 8, 16 or 32 steps of 32 episodes. 16 is the FrozenLake format default.
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 2', { algorithm: { selfImitationSteps: 2, selfImitationLearningRate: 0.001, selfImitationBufferSize: 512 } }),
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 8', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 8 } }),
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 16', { algorithm: SELF_IMITATION }),
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 32', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 32 } }),
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 16 d64', { algorithm: SELF_IMITATION, model: { dModel: 64, heads: 4 } }),
  // Grid positions (grid-positions.ts), which lifted Sokoban from demonstrations from 0.34 to 0.67,
  // on the format default: reading the grid is what learning without an expert lacks.
  column('format', 'starpo-s', THREE_SEEDS, 'self-imitation 32 grid positions', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 32 }, model: { gridPositions: true } }),
  // From demonstrations, on Sokoban's recipe before grid positions became its default (those runs
  // were trained so): without them, and with the world-model loss in the imitation warm-up
  // instead, to teach the model to read the grid while it imitates (the loss adds no forward pass).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'no grid positions', { model: { gridPositions: false } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'world model warm-up without grid positions', { model: { gridPositions: false }, training: { warmup: { worldModelCoef: 1 } } }),
];

export interface RunKey {
  revision: number;
  env: string;
  envConfig: Record<string, unknown>;
  preset: string;
  warmup: Warmup;
  seed: number;
  steps: number;
  overrides: Column['overrides'];
  /** The evaluation protocol (RAGEN's: 256 seeds at temperature 0.5). */
  protocol: { evalEpisodes: number; evalTemperature: number };
}

export const RAGEN_PROTOCOL = { evalEpisodes: 256, evalTemperature: 0.5 } as const;

export function runKey(row: Row, col: Column, seed: number): RunKey {
  return { revision: LEARNING_REVISION, env: row.env, envConfig: row.envConfig, preset: col.preset, warmup: col.warmup, seed, steps: row.steps, overrides: col.overrides, protocol: RAGEN_PROTOCOL };
}

/** The job a run trains: the defaults, plus the row's environment and budget and the column's overrides. */
export function specOf(key: RunKey): Record<string, unknown> {
  const { rollout, model, training, algorithm } = key.overrides;
  return {
    name: `bench-${key.env}-${key.preset}-${key.warmup}-s${key.seed}`,
    environment: { id: key.env, config: key.envConfig },
    algorithm: { id: key.preset, ...(algorithm ? { config: algorithm } : {}) },
    ...(model ? { model: { config: model } } : {}),
    ...(rollout ? { rollout } : {}),
    training: { ...training, steps: key.steps, seed: key.seed, checkpointEvery: 0, warmup: { ...(training?.warmup as object), kind: key.warmup }, ...key.protocol },
  };
}

/**
 * Knobs added after results were stored, at the value that leaves a run as it was: left out of
 * the digest so that adding a knob does not make every stored run stale.
 */
const NEUTRAL_FIELDS: Readonly<Record<string, unknown>> = {
  'model.config.gridPositions': false,
  'algorithm.config.worldModelCoef': 0,
  'algorithm.config.selfImitationSteps': 0,
  'algorithm.config.selfImitationBatchSize': 32,
  'algorithm.config.selfImitationBufferSize': 512,
  'algorithm.config.selfImitationLearningRate': 0.001,
  'training.warmup.worldModelCoef': 0,
  // AEPO's update, DAPO's dynamic sampling, GiGPO's step advantages and tree rollouts: off, or
  // read only when their mode is on.
  'algorithm.config.clipMode': 'ppo',
  'algorithm.config.entropyAdvantageAlpha': 0,
  'algorithm.config.dynamicSampling': false,
  'algorithm.config.dynamicSamplingMaxBatches': 10,
  'algorithm.config.gigpoStepWeight': 1,
  'algorithm.config.gigpoGamma': 0.95,
  'algorithm.config.gigpoNormalization': 'mean-std',
  'algorithm.config.rollout': 'independent',
  'algorithm.config.branchThreshold': 0.5,
  'algorithm.config.branchEntropyWeight': 0.2,
  'algorithm.config.branchPenalty': 0.05,
  'algorithm.config.branchInitialShare': 0.5,
  'algorithm.config.branchesPerDecision': 1,
  'algorithm.config.entropyTokens': 20,
  'algorithm.config.entropyPreMonitoring': true,
  'algorithm.config.entropyMonitorBeta': 0.5,
};

/** Self-imitation's knobs are read only when its steps are on (its switch left out as neutral when 0). */
const DORMANT: readonly Dormant[] = [
  {
    switch: 'algorithm.config.selfImitationSteps',
    knobs: ['algorithm.config.selfImitationBatchSize', 'algorithm.config.selfImitationBufferSize', 'algorithm.config.selfImitationLearningRate'],
  },
];

/** The identity of a stored result: the key and a digest of the resolved spec it trains (bench/runs.ts). */
export function keyId(key: RunKey): string {
  return resultId(key, specOf(key), NEUTRAL_FIELDS, DORMANT);
}

/**
 * The like-for-like learning table: its rows (environments with their budget), its columns
 * (warm-up kind, preset, the overrides the cell names, seeds) and how a run is keyed. Every run
 * is the job a user gets from `environment.id` and `algorithm.id` plus only the column's
 * overrides, so the table shows what the service does by default.
 */

import type { EnvDefinition } from '../src/training/envs/types';
import { BenchRow, resultId } from './runs';

/** Bump when the training code changes what a run measures: stored results then no longer match. */
export const LEARNING_REVISION = 1;

/**
 * RAGEN (Wang et al. 2025) StarPO-S with Qwen2.5-0.5B-Instruct, success on its validation seeds:
 * RL alone from the instruction-tuned model, 200 steps at a constant learning rate. Its like-for-like
 * cells here are the RAGEN_BUDGET columns (the format warm-up, RAGEN's update, its budget).
 */
export const RAGEN_STARPO_S: Readonly<Record<string, number>> = { bandit: 1.0, sokoban: 0.203, 'frozenlake-slippery': 0.218 };
/**
 * RAGEN's supervised fine-tuning on expert trajectories alone (no RL), the same model and seeds:
 * what the demonstrations table (imitation, then RL) is to be set beside, not its StarPO-S figure.
 */
export const RAGEN_SFT: Readonly<Record<string, number>> = { sokoban: 0.746, 'frozenlake-slippery': 0.23 };
/** RAGEN's RL budget: 200 steps of 8 × 16 rollouts. */
export const RAGEN_STEPS = 200;

/** A row's budget: RAGEN's is 200 steps of 8×16 rollouts. */
export interface Row extends BenchRow {
  hasExpert: boolean;
  /** The columns the row runs, by name; absent: every column of COLUMNS. */
  columns?: readonly string[];
  /**
   * An environment served by another process: the command the bench starts before the row's runs
   * (and stops after), listening where `envConfig.url` says.
   */
  serve?: readonly string[];
  /**
   * Rollout settings under every format column's own on this row: what the environment's format
   * recipe changed after the columns' runs, so that they measure what they were trained with.
   */
  formatRollout?: Column['overrides']['rollout'];
  /**
   * The replay's selection under every format column that turns self-imitation on and names none:
   * the recipe's changed after those columns' runs (the selection is read only while the replay is
   * on, so the pin goes only where it is).
   */
  formatReplay?: 'all';
  /**
   * The RL curriculum's share under every format column that names none: the recipe's began after
   * those columns' runs (0, off, which leaves their digests as they were).
   */
  formatCurriculum?: 0;
  /**
   * Model settings under every format column's own on this row: the model the columns' runs were
   * trained with, where the environment's format recipe gives another (`gridPositions: false`,
   * neutral in the digest, so the runs keep their digests).
   */
  formatModel?: Column['overrides']['model'];
}

export const ROWS: readonly Row[] = [
  { name: 'bandit', label: 'Bandit', env: 'bandit', envConfig: {}, steps: 100, hasExpert: false },
  // Sokoban's format recipe took the lake's rollout (ten turns of one action, 64 × 4) and weighted
  // replay after the format columns here were trained with RAGEN's 5 turns of up to 5 actions and
  // every success alike, and every format column but the one that tries grid positions was trained
  // without them: the pins keep them what they were (the columns pin 8 × 16 themselves).
  { name: 'sokoban', label: 'Sokoban 6×6 (RAGEN rooms)', env: 'sokoban', envConfig: {}, steps: 100, hasExpert: true, formatRollout: { maxActionsPerTurn: 5, maxTurns: 5 }, formatReplay: 'all', formatModel: { gridPositions: false } },
  // The slippery lake's format recipe took ten turns of one action, 64 × 4 and the weighted replay
  // after the format columns here were trained with RAGEN's 5 turns of up to 5 actions, 8 × 16 and
  // every success alike, and its first half of RL steps on the lake without slips after that: the
  // pins keep them what they were.
  { name: 'frozenlake-slippery', label: 'FrozenLake 4×4, slippery', env: 'frozenlake', envConfig: { slippery: true }, steps: 100, hasExpert: true, formatRollout: { groups: 8, groupSize: 16, maxActionsPerTurn: 5, maxTurns: 5 }, formatReplay: 'all', formatCurriculum: 0 },
  // The lake's format recipe answers with one action (recipes.ts); RAGEN's rollout writes up to 5. Its
  // replay is weighted by advantage; the columns before it replayed every success alike.
  { name: 'frozenlake', label: 'FrozenLake 4×4, not slippery', env: 'frozenlake', envConfig: { slippery: false }, steps: 100, hasExpert: true, formatRollout: { maxActionsPerTurn: 5 }, formatReplay: 'all' },
  // The tool-use task: its default job and its levers, from demonstrations only. bench/algorithms
  // trains the same default job with every preset beside StarPO-S.
  { name: 'lookup-qa', label: 'lookup-qa (tool use)', env: 'lookup-qa', envConfig: {}, steps: 100, hasExpert: true, columns: ['demonstrations/starpo-grpo', 'demonstrations/starpo-s', 'demonstrations/starpo-s/200 RL steps', 'demonstrations/starpo-s/width 64 imitation 128x1600'] },
];

/**
 * The port the example server of SERVED_ROWS listens on: fixed, because the address is part of
 * the spec a run is keyed by.
 */
export const GUESS_NUMBER_PORT = 18765;

/**
 * Rows whose environment is served over the StarLab environment protocol by an example server
 * (examples/environments/), trained only when named (`--rows guess-number`): the default job from
 * each warm-up, three seeds, beside the random agent and the server's expert.
 */
export const SERVED_ROWS: readonly Row[] = [
  {
    name: 'guess-number',
    label: 'Guess the number 1–15 in 4 (example server, HTTP)',
    env: 'http',
    envConfig: { url: `http://127.0.0.1:${GUESS_NUMBER_PORT}` },
    // The default job's 200 RL steps (training.steps): the figure is what a user who names only
    // the environment gets.
    steps: 200,
    hasExpert: true,
    columns: ['format/starpo-s/default', 'format/starpo-s/one action per turn', 'demonstrations/starpo-s'],
    serve: ['python3', 'examples/environments/guess_number_server.py', '--port', String(GUESS_NUMBER_PORT)],
  },
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
  /** RL steps, where the column's budget is not its row's (RAGEN_BUDGET columns). */
  steps?: number;
  /** The only rows the column is trained and shown on, where its overrides name one environment's config (a curriculum's). */
  rows?: readonly string[];
}

/** Whether a row shows a column: every column its environment's config allows, and demonstrations only where it has an expert. */
export const showsColumn = (row: Row, column: Column): boolean => (column.warmup === 'format' || row.hasExpert) && (!column.rows || column.rows.includes(row.name));

const THREE_SEEDS = [1, 2, 3];
/** A demonstrations column is imitation of the expert, then RL (StarLab's recipe), and is labelled so, not as the preset alone. */
const column = (warmup: Warmup, preset: string, seeds: readonly number[], suffix = '', overrides: Column['overrides'] = {}, label = `${warmup === 'demonstrations' ? 'SFT, then ' : ''}${preset}${suffix ? ` (${suffix})` : ''}`): Column => ({
  name: `${warmup}/${preset}${suffix ? `/${suffix}` : ''}`,
  label,
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
/**
 * RAGEN's rollout, 8 initial states of 16 episodes a step (the schema's), pinned on the format
 * cells that do not name their own: the lake's format recipe now draws 64 × 4, and these cells
 * measure RAGEN's rollout, as they were trained. (Its 5 actions an answer are the lake row's
 * `formatRollout`: the Bandit's answer is one action.)
 */
const RAGEN_ROLLOUT = { groups: 8, groupSize: 16 };
const withRagenRollout = (overrides: Column['overrides']): Column['overrides'] => ({ ...overrides, rollout: { ...RAGEN_ROLLOUT, ...overrides.rollout } });
const withRagenUpdate = (overrides: Column['overrides'] = {}): Column['overrides'] => withRagenRollout({ ...overrides, algorithm: { ...RAGEN_UPDATE, ...overrides.algorithm } });
/** The format recipe's self-imitation (recipes.ts), named in full so it means the same on every row. */
const SELF_IMITATION = { selfImitationSteps: 16, selfImitationLearningRate: 0.003, selfImitationBufferSize: 2048 };
/** 64 initial states of 4 episodes a step, as the non-slippery lake's format recipe draws (recipes.ts). */
const MORE_MAPS = { groups: 64, groupSize: 4 };
/** The non-slippery lake's format rollout (recipes.ts): 64 × 4 at one action an answer. */
const ONE_ACTION = { ...MORE_MAPS, maxActionsPerTurn: 1 };
/** GiGPO's advantages (the episode's group z-score plus ω = 1 × the anchor states' step advantage) under StarPO-S's update. */
const STEP_ADVANTAGES = { advantage: 'gigpo', whitenAdvantages: false } as const;
/** Self-imitation is StarLab's addition to RAGEN's update, so its columns say so. */
/** The slippery lake's format recipe without its curriculum: ten turns of one action, 64 × 4, the replay weighted by advantage. */
const SLIPPERY_FORMAT: Column['overrides'] = { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'advantage' }, rollout: { ...ONE_ACTION, maxTurns: 10 } };
/** The RL curriculum on the lake without slips, for the first `share` of the steps. */
const withoutSlips = (share: number) => ({ curriculumShare: share, curriculumConfig: { slippery: false } });
const selfImitation = (steps: number, suffix = '', overrides: Column['overrides'] = { algorithm: { ...SELF_IMITATION, selfImitationSteps: steps } }): Column =>
  column('format', 'starpo-s', THREE_SEEDS, `self-imitation ${steps}${suffix ? ` ${suffix}` : ''}`, withRagenRollout(overrides), `StarLab's recipe: starpo-s + self-imitation ${steps}${suffix ? ` (${suffix})` : ''}`);

/**
 * RAGEN's rows at RAGEN's budget: from the format warm-up (no expert), RAGEN's update alone (no
 * self-imitation), 200 steps at a constant learning rate where the other columns run the row's 100
 * with the recipe's cosine decay. These, and only these, stand beside RAGEN_STARPO_S.
 */
export const RAGEN_BUDGET = 'RAGEN budget';
const ragenBudget = (preset: string): Column => ({
  ...column('format', preset, THREE_SEEDS, RAGEN_BUDGET, withRagenUpdate({ training: { lrSchedule: 'constant' } }), `${preset} (RAGEN's budget: ${RAGEN_STEPS} steps, constant LR)`),
  steps: RAGEN_STEPS,
});

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
  ...['starpo-s', 'starpo-ppo', 'starpo-grpo'].map(ragenBudget),
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
  selfImitation(2, '', { algorithm: { selfImitationSteps: 2, selfImitationLearningRate: 0.001, selfImitationBufferSize: 512 } }),
  selfImitation(8),
  selfImitation(16, '', { algorithm: SELF_IMITATION }),
  selfImitation(32),
  selfImitation(16, 'd64', { algorithm: SELF_IMITATION, model: { dModel: 64, heads: 4 } }),
  // The format default job as a user runs it: training.steps' 200 RL steps, where the table's rows
  // run 100 (self-imitation's success was still rising at step 100 on the non-slippery lake).
  { ...selfImitation(16, '200 RL steps', { algorithm: SELF_IMITATION }), steps: 200 },
  // How fast self-imitation climbs over those 200 steps: its rate (and RL's) held constant instead
  // of decayed, its own rate doubled under the decay, or both.
  { ...selfImitation(16, '200 RL steps constant rate', { algorithm: SELF_IMITATION, training: { lrSchedule: 'constant' } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps replay rate 0.006', { algorithm: { ...SELF_IMITATION, selfImitationLearningRate: 0.006 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps constant rate and replay rate 0.006', { algorithm: { ...SELF_IMITATION, selfImitationLearningRate: 0.006 }, training: { lrSchedule: 'constant' } }), steps: 200 },
  // Only each group's shortest successes replayed (selfImitationSelect), so that a success that
  // wandered does not teach its detours.
  { ...selfImitation(16, '200 RL steps shortest', { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'shortest' } }), steps: 200 },
  // More maps a step for the replay to learn from, on the same 128 episodes: 32 groups of 4 and
  // 64 of 2 instead of 8 of 16 (200 steps of 8 groups show the agent 1,600 maps in all).
  { ...selfImitation(16, '200 RL steps 32x4', { algorithm: SELF_IMITATION, rollout: { groups: 32, groupSize: 4 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x2', { algorithm: SELF_IMITATION, rollout: { groups: 64, groupSize: 2 } }), steps: 200 },
  // Twice the maps again at 4 episodes each (256 episodes a step, the schema's most), also with
  // both rates held constant instead of decayed.
  { ...selfImitation(16, '200 RL steps 64x4', { algorithm: SELF_IMITATION, rollout: MORE_MAPS }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 constant rate', { algorithm: SELF_IMITATION, rollout: MORE_MAPS, training: { lrSchedule: 'constant' } }), steps: 200 },
  // What else was screened on the 64 × 4 job (seed 1): row and column embeddings on the lake's
  // cells (grid-positions.ts); the replay's rate doubled, its batch doubled, its buffer doubled;
  // cooler rollouts (more of the agent's own successes to replay); width 64; the replay alone
  // (RL's own rate at the schema's least; the replay's rate is its own); each map's 4 rollouts
  // compared with each other (GRPO's group advantages) instead of the critic's baseline; RL's
  // rate tripled.
  { ...selfImitation(16, '200 RL steps 64x4 grid positions', { algorithm: SELF_IMITATION, rollout: MORE_MAPS, model: { gridPositions: true } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 replay rate 0.006', { algorithm: { ...SELF_IMITATION, selfImitationLearningRate: 0.006 }, rollout: MORE_MAPS }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 replay batch 64', { algorithm: { ...SELF_IMITATION, selfImitationBatchSize: 64 }, rollout: MORE_MAPS }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 temperature 0.7', { algorithm: SELF_IMITATION, rollout: { ...MORE_MAPS, temperature: 0.7 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 d64', { algorithm: SELF_IMITATION, rollout: MORE_MAPS, model: { dModel: 64, heads: 4 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 replay alone', { algorithm: SELF_IMITATION, rollout: MORE_MAPS, training: { learningRate: 0.000001 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 group advantages', { algorithm: { ...SELF_IMITATION, advantage: 'grpo', whitenAdvantages: false }, rollout: MORE_MAPS }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 RL rate 0.003', { algorithm: SELF_IMITATION, rollout: MORE_MAPS, training: { learningRate: 0.003 } }), steps: 200 },
  // One action an answer (as a served environment's recipe): the agent reads the lake after every
  // move instead of writing up to 5 blind, which bench/lake-failures showed it walks into holes
  // with. The lake's format default now, at 200 steps and at the table's 100.
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn', { algorithm: SELF_IMITATION, rollout: ONE_ACTION }), steps: 200 },
  selfImitation(16, '64x4 one action a turn', { algorithm: SELF_IMITATION, rollout: ONE_ACTION }),
  // Ten turns of one action, so that the turns allow the episode's 10 actions (optimum 100%).
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn 10 turns', { algorithm: SELF_IMITATION, rollout: { ...ONE_ACTION, maxTurns: 10 } }), steps: 200 },
  // At one action a turn a group's rollouts meet in the same states, so GiGPO's anchor groups can
  // say which move from a state led into a hole: step credit that the episode's return spreads thin.
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn step advantages', { algorithm: { ...SELF_IMITATION, ...STEP_ADVANTAGES }, rollout: ONE_ACTION }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn step advantages RL rate 0.003', { algorithm: { ...SELF_IMITATION, ...STEP_ADVANTAGES }, rollout: ONE_ACTION, training: { learningRate: 0.003 } }), steps: 200 },
  // SIL's (R − V)+ with the group's success rate as V: the maps the agent rarely solves are replayed
  // most, where the FIFO buffer is mostly maps it already solves (self-imitation.ts, 'advantage').
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn advantage-weighted replay', { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'advantage' }, rollout: ONE_ACTION }), steps: 200 },
  selfImitation(16, '64x4 one action a turn advantage-weighted replay', { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'advantage' }, rollout: ONE_ACTION }),
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn advantage-weighted replay buffer 4096', { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'advantage', selfImitationBufferSize: 4096 }, rollout: ONE_ACTION }), steps: 200 },
  { ...selfImitation(32, '200 RL steps 64x4 one action a turn advantage-weighted replay', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 32, selfImitationSelect: 'advantage' }, rollout: ONE_ACTION }), steps: 200 },
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn advantage-weighted replay step advantages', { algorithm: { ...SELF_IMITATION, ...STEP_ADVANTAGES, selfImitationSelect: 'advantage' }, rollout: ONE_ACTION }), steps: 200 },
  // The slippery lake: two actions an answer keep the turns' optimum near the lake's (48.1% against
  // 49.6% at 5; one action a turn caps it at 29.6%), and the advantage-weighted replay.
  { ...selfImitation(16, '200 RL steps two actions a turn', { algorithm: SELF_IMITATION, rollout: { maxActionsPerTurn: 2 } }), steps: 200 },
  { ...selfImitation(16, '200 RL steps advantage-weighted replay', { algorithm: { ...SELF_IMITATION, selfImitationSelect: 'advantage' } }), steps: 200 },
  // The non-slippery lake's recipe with ten turns of one action on the slippery lake: RAGEN's 10
  // actions, each seen before the next. The best play then reaches 50.4% of the evaluation maps (the
  // optimum the table prints), and re-planning the shortest path after every move 36.6%, where at
  // 5 turns of one action the optimum is 29.6%.
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn ten turns advantage-weighted replay', SLIPPERY_FORMAT), steps: 200 },
  // The same at the table's 100 steps: the slippery lake's format recipe since (recipes.ts).
  selfImitation(16, '64x4 one action a turn ten turns advantage-weighted replay', SLIPPERY_FORMAT),
  // The same, its first 100 RL steps on the lake without slips (training.curriculumShare): the
  // non-slippery lake's recipe learns its shortest paths by then (77% there), and re-planning the
  // shortest path after every move reaches 36.6% of the slippery evaluation maps.
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn ten turns advantage-weighted replay first half without slips', { ...SLIPPERY_FORMAT, training: withoutSlips(0.5) }), steps: 200, rows: ['frozenlake-slippery'] },
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn ten turns advantage-weighted replay first three quarters without slips', { ...SLIPPERY_FORMAT, training: withoutSlips(0.75) }), steps: 200, rows: ['frozenlake-slippery'] },
  // The same at the table's 100 steps: its first 50 without slips.
  { ...selfImitation(16, '64x4 one action a turn ten turns advantage-weighted replay first half without slips', { ...SLIPPERY_FORMAT, training: withoutSlips(0.5) }), rows: ['frozenlake-slippery'] },
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn grid positions', { algorithm: SELF_IMITATION, rollout: ONE_ACTION, model: { gridPositions: true } }), steps: 200 },
  // The same at the table's 100 steps.
  selfImitation(16, '64x4', { algorithm: SELF_IMITATION, rollout: MORE_MAPS }),
  // The same, twice as long: 400 RL steps.
  { ...selfImitation(16, '400 RL steps 64x4', { algorithm: SELF_IMITATION, rollout: MORE_MAPS }), steps: 400 },
  // Sokoban's format recipe, its first half of RL steps on rooms solved in 2 or 3 moves (the 'hard'
  // generator at 3 reverse steps; RAGEN's rooms take about 4): the slippery lake's curriculum lever.
  { ...selfImitation(32, 'first half on rooms of 2-3 moves', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 32 }, training: { curriculumShare: 0.5, curriculumConfig: { difficulty: 'hard', reverseSteps: 3 } } }), rows: ['sokoban'] },
  // Sokoban's format recipe as a user runs it: training.steps' 200 RL steps (its row runs 100), and
  // the lake's format rollout on Sokoban: 64 × 4 of ten turns at one action an answer, replayed by
  // advantage (the column … 64x4 one action a turn ten turns advantage-weighted replay above).
  { ...selfImitation(32, '200 RL steps'), steps: 200, rows: ['sokoban'] },
  // Sokoban's format recipe with row and column embeddings of the grid (gridPositions), which lifted
  // its imitation of the BFS solver from 33% to 60%: the replay is an imitation of its own successes.
  { ...selfImitation(16, '200 RL steps 64x4 one action a turn ten turns advantage-weighted replay grid positions', { ...SLIPPERY_FORMAT, model: { gridPositions: true } }), steps: 200, rows: ['sokoban'] },
  // Grid positions (grid-positions.ts), which lifted Sokoban from demonstrations from 0.34 to 0.67,
  // on the format default: reading the grid is what learning without an expert lacks.
  selfImitation(32, 'grid positions', { algorithm: { ...SELF_IMITATION, selfImitationSteps: 32 }, model: { gridPositions: true } }),
  // From demonstrations, on Sokoban's recipe before grid positions became its default (those runs
  // were trained so): without them, and with the world-model loss in the imitation warm-up
  // instead, to teach the model to read the grid while it imitates (the loss adds no forward pass).
  // (and on 64-turn batches of 1,200 steps, as its recipe imitated before 128 and 2,400).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'no grid positions', { model: { gridPositions: false }, training: { warmup: { steps: 1200, batchSize: 64 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'world model warm-up without grid positions', { model: { gridPositions: false }, training: { warmup: { worldModelCoef: 1, steps: 1200, batchSize: 64 } } }),
  // FrozenLake from demonstrations had never tried grid positions (issue: imitation stopped near 0.62).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'grid positions', { model: { gridPositions: true } }),
  // The imitation's length and batch (docs/learning-defaults.md), each named in full so that it
  // means the same whatever the recipe: FrozenLake's recipe before 1,600 × 128 turns became its
  // default (400 steps of 64 turns; its runs were the default column's until then), also with
  // <think>; twice its steps; then 128-turn batches, which imitated FrozenLake best in the screen
  // (1,600 of them were the recipe before 3,200; those runs were the default's until then).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 64x400', { training: { warmup: { steps: 400, batchSize: 64 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'think imitation 64x400', { rollout: { think: true, maxTokensPerTurn: 24 }, training: { warmup: { steps: 400, batchSize: 64 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'warm-up 800', { training: { warmup: { steps: 800, batchSize: 64 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x800', { training: { warmup: { steps: 800, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x1600', { training: { warmup: { steps: 1600, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x3200', { training: { warmup: { steps: 3200, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x5000', { training: { warmup: { steps: 5000, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x10000', { training: { warmup: { steps: 10000, batchSize: 128 } } }),
  // The imitation's rate decayed (cosine, to 10%) over its steps, as RL's is.
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x3200 cosine rate', { training: { warmup: { steps: 3200, batchSize: 128, lrSchedule: 'cosine' } } }),
  // Sokoban's 1,200 imitation steps on 128-turn batches, the batch that imitated FrozenLake best,
  // and on 64, its recipe before (also with <think>; their runs were the default's until then).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x1200', { training: { warmup: { steps: 1200, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 64x1200', { training: { warmup: { steps: 1200, batchSize: 64 } } }),
  // Twice Sokoban's imitation: its loss was still falling at 1,200 steps (seed 1: 72.7 -> 79.3% after the warm-up).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x2400', { training: { warmup: { steps: 2400, batchSize: 128 } } }),
  // And twice that (seed 1 after the warm-up: 72.7, 79.3% for 1,200 and 2,400 steps).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x4800', { training: { warmup: { steps: 4800, batchSize: 128 } } }),
  // lookup-qa's imitation at FrozenLake's width and length (its recipe imitated 400 steps of 64 turns at
  // width 32 then), without the token shift and the two-hop curriculum its recipe has since.
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'width 64 imitation 128x1600', { model: { dModel: 64, heads: 4, tokenShift: false }, training: { warmup: { steps: 1600, batchSize: 128, curriculumShare: 0 } } }),
  // The imitation's rate decayed (cosine, to 10%) over Sokoban's 1,200 steps, which lifted seed 1's imitation 72.7 -> 75.4%.
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'imitation 128x1200 cosine rate', { training: { warmup: { steps: 1200, batchSize: 128, lrSchedule: 'cosine' } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'think imitation 64x1200', { rollout: { think: true, maxTokensPerTurn: 24 }, training: { warmup: { steps: 1200, batchSize: 64 } } }),
  // DAPO's dynamic sampling on StarPO-S: after a warm-up that solves ~90% of the lake most groups
  // are all successes, with nothing to learn from; DAPO, which resamples until its groups vary,
  // ended above StarPO-S there (bench/algorithms).
  // (after 1,600 imitation steps, the recipe then).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'dynamic sampling after imitation 128x1600', { algorithm: { dynamicSampling: true }, training: { warmup: { steps: 1600, batchSize: 128 } } }),
  // The default job as a user runs it: training.steps' 200 RL steps, where the table's rows run 100.
  { ...column('demonstrations', 'starpo-s', THREE_SEEDS, '200 RL steps'), steps: 200 },
  // RL's learning rate (training.learningRate; the schema's 0.001, the slippery lake's recipe 0.0003):
  // there the imitation of the turn expert is near the best policy, and RL's noisy gradients move it away.
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'RL rate 0.001', { training: { learningRate: 0.001 } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'RL rate 0.0003', { training: { learningRate: 0.0003 } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'RL rate 0.0001', { training: { learningRate: 0.0001 } }),
  // DAPO's other parts, one at a time on StarPO-S: its token-mean loss (long answers weigh more);
  // every group whose returns differ (dynamic sampling without the top-quarter filter); and
  // group-normalised returns instead of the critic, which a warm-up leaves untrained.
  // (after 3,200 imitation steps, the non-slippery lake's recipe then).
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'token-mean loss after imitation 128x3200', { algorithm: { lossAggregation: 'token-mean' }, training: { warmup: { steps: 3200, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'every varied group after imitation 128x3200', { algorithm: { dynamicSampling: true, filter: 'none' }, training: { warmup: { steps: 3200, batchSize: 128 } } }),
  column('demonstrations', 'starpo-s', THREE_SEEDS, 'group advantages after imitation 128x3200', { algorithm: { advantage: 'grpo', whitenAdvantages: false }, training: { warmup: { steps: 3200, batchSize: 128 } } }),
];

/**
 * Columns only the rows that name them run: the default job from the format warm-up (whatever the
 * environment's recipe says), where COLUMNS' format cells pin RAGEN's update.
 */
export const SERVED_COLUMNS: readonly Column[] = [
  column('format', 'starpo-s', THREE_SEEDS, 'default'),
  // One action per answer, so that every action is answered before the next is chosen: the format
  // warm-up otherwise teaches 1-5 blind actions a turn, and a game of feedback ends in two turns.
  column('format', 'starpo-s', THREE_SEEDS, 'one action per turn', { rollout: { maxActionsPerTurn: 1 } }),
];

/** The columns a row runs: those it names, else COLUMNS; from demonstrations only with an expert. */
export function columnsOf(row: Row): Column[] {
  const named = row.columns ? [...COLUMNS, ...SERVED_COLUMNS].filter((c) => row.columns!.includes(c.name)) : [...COLUMNS];
  return named.filter((c) => showsColumn(row, c));
}

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
  const format = col.warmup === 'format';
  const overrides: Column['overrides'] = { ...col.overrides };
  if (format && row.formatRollout) overrides.rollout = { ...row.formatRollout, ...col.overrides.rollout };
  if (format && row.formatModel) overrides.model = { ...row.formatModel, ...col.overrides.model };
  const algorithm = col.overrides.algorithm;
  if (format && row.formatReplay && Number(algorithm?.selfImitationSteps ?? 0) > 0 && algorithm?.selfImitationSelect === undefined) {
    overrides.algorithm = { ...algorithm, selfImitationSelect: row.formatReplay };
  }
  if (format && row.formatCurriculum !== undefined && col.overrides.training?.curriculumShare === undefined) {
    overrides.training = { ...col.overrides.training, curriculumShare: row.formatCurriculum };
  }
  return { revision: LEARNING_REVISION, env: row.env, envConfig: row.envConfig, preset: col.preset, warmup: col.warmup, seed, steps: col.steps ?? row.steps, overrides, protocol: RAGEN_PROTOCOL };
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

/** A served environment's spec as it is trained: the address out of `environment.config` (src/cli/served-environment.ts). */
export function withoutAddress(spec: Record<string, unknown>): Record<string, unknown> {
  return { ...spec, environment: { id: (spec.environment as { id: string }).id } };
}

/**
 * The identity of a stored result: the key and a digest of the resolved spec it trains
 * (bench/runs.ts); for a served row, resolved with its server's definition (`served`).
 */
export function keyId(key: RunKey, served?: EnvDefinition): string {
  return served ? resultId(key, withoutAddress(specOf(key)), served) : resultId(key, specOf(key));
}

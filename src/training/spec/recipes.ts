import type { AlgorithmConfig } from '../algorithms/presets';
import type { ModelConfig, RolloutConfig, TrainingConfig, WarmupConfig } from './job-spec';

/** Settings a job gets by default for one environment and warm-up kind; the job's own values win. */
export interface Recipe {
  /** Over the preset's config, under the job's `algorithm.config`. */
  algorithm?: Partial<AlgorithmConfig>;
  model?: Partial<ModelConfig>;
  rollout?: Partial<RolloutConfig>;
  training?: Partial<Omit<TrainingConfig, 'warmup'>> & { warmup?: Partial<WarmupConfig> };
  /** Sections merged over the recipe's where the environment's config (its defaults filled in) has these values. */
  where?: { config: Record<string, unknown>; recipe: Omit<Recipe, 'where'> };
}

/** `recipe` for one environment config: its `where` sections over it when the config matches. */
export function recipeFor(recipe: Recipe, config: Record<string, unknown>): Omit<Recipe, 'where'> {
  const { where, ...base } = recipe;
  if (!where || !Object.entries(where.config).every(([field, value]) => config[field] === value)) return base;
  const over = where.recipe;
  return {
    algorithm: { ...base.algorithm, ...over.algorithm },
    model: { ...base.model, ...over.model },
    rollout: { ...base.rollout, ...over.rollout },
    training: { ...base.training, ...over.training, warmup: { ...base.training?.warmup, ...over.training?.warmup } },
  };
}

export type RecipeWarmup = 'format' | 'demonstrations';

/**
 * The small model that learns best on these tasks, as bench/learning measured it
 * (docs/results.md): 2 layers of width 32, answers without `<think>` (thought tokens of a model this
 * size carry nothing, and a think block lengthens every turn of the history), and a cosine
 * learning-rate decay, which keeps long runs from breaking late.
 */
const SMALL_MODEL: Recipe = {
  model: { dModel: 32, layers: 2, heads: 2 },
  rollout: { think: false, maxTokensPerTurn: 16 },
  training: { lrSchedule: 'cosine' },
};

/**
 * Imitating an expert over whole-episode contexts takes longer than over the current observation
 * alone: on non-slippery FrozenLake the imitation loss sits near 0.35 until about step 200 and
 * then falls; after 150 warm-up steps eval success is 0.133 (below the random agent's), after
 * 400 it is 0.574 (seed 1, RAGEN's protocol). lookup-qa shows the same (0.03 → 0.25).
 */
const FROM_DEMONSTRATIONS: Recipe = { ...SMALL_MODEL, training: { ...SMALL_MODEL.training, warmup: { steps: 400 } } };

/**
 * lookup-qa's answer is a recall: the name after the question's relation in the search result
 * just shown. Without a token shift the imitation copies a name from the result but not the right
 * one: 27.3% after 1,600 steps of 64 turns (seed 1, RAGEN's protocol), 43% on one-hop questions,
 * where picking one of the three facts at random gives 33%; width 64, 3 layers, 8 heads, 3,200
 * steps and the expert's thoughts all stalled at 25–29%. With each input carrying the previous
 * token (model.config.tokenShift), 1,600 steps imitate the expert to 0.992 on seed 1 (loss 0.003);
 * after 800 steps it is still 0.270, and after 400, 0.195: the recall is learned at once, at a
 * step that differs by seed (seed 2 had not reached it after 1,600: 0.285, nor after 3,200), so the
 * recipe imitates 3,200.
 *
 * On the default questions (1 to 3 hops) the first half of them are two-hop at most
 * (training.warmup.curriculumShare): on questions that follow one relation or two, every seed
 * learned the recall and kept it on the three-hop questions after. The default job imitates to
 * 0.996 (0.988–1.000, seeds 1–3) and ends 100 StarPO-S steps at 1.000 on every seed, against
 * 0.505 (0.254–1.000) without the curriculum. One-hop questions first did not carry over (seed 2:
 * 0.250): with a single relation in the question, its position alone may say which word to look
 * up (docs/learning-defaults.md).
 */
const LOOKUP_QA_FROM_DEMONSTRATIONS: Recipe = {
  ...FROM_DEMONSTRATIONS,
  model: { ...SMALL_MODEL.model, tokenShift: true },
  training: { ...FROM_DEMONSTRATIONS.training, warmup: { steps: 3200 } },
  where: { config: { minHops: 1, maxHops: 3 }, recipe: { training: { warmup: { curriculumShare: 0.5, curriculumConfig: { maxHops: 2 } } } } },
};

/**
 * FrozenLake from demonstrations is where width measurably pays (seed 1, RAGEN's protocol, 400
 * warm-up steps): d = 64 imitates to 0.707 against d = 32's 0.574 and holds 0.707 after 40
 * StarPO-S steps (d = 32: 0.602), at about 2.3× the time per step. The other environments keep
 * d = 32 until a run shows the same there.
 *
 * What the imitation needs is turns: 1,600 steps of 128-turn batches (eight times 400 × 64)
 * imitate the non-slippery lake to 0.879–0.898 and end RL at 0.908 (0.902–0.914, seeds 1–3),
 * against 0.617 → 0.665 (0.523–0.738) for 400 × 64; the loss was still falling (0.049–0.058).
 * More turns per step without more steps did not pay (256 or 512 turns × 400: 0.773, 0.816;
 * seed 1), nor did depth (4 layers: 0.145). docs/learning-defaults.md has every run.
 *
 * On the non-slippery lake 3,200 steps imitate to 0.910–0.930 (0.922 over seeds 1–3, loss
 * 0.030–0.037) and RL ends higher than after 1,600 (docs/learning-defaults.md); each doubling
 * still paid, and 10,000 steps imitate to 0.949–0.984 (0.966) and end at 0.964 (0.957–0.973)
 * after 100 StarPO-S steps, every seed above 0.95. On the slippery
 * lake the longer imitation did not pay (seed 1: 0.309 after RL against 0.355), for twice the
 * warm-up's time, with the shortest path spread over the turns as the teacher (25.8% of the
 * evaluation maps).
 *
 * The slippery lake's teacher is now the turn expert (frozenLakeTurnExpert, 48.1%): 1,600 steps
 * imitate it to 0.482 (0.465–0.492, seeds 1–3). RL at the schema's rate of 0.001 then loses 6
 * points (0.423, 0.398–0.453): its gradients from 8 × 16 slip-ridden episodes are mostly noise
 * around a near-optimal policy. At 0.0003 it holds the imitation: 0.473 (0.453–0.484) after 100
 * StarPO-S steps (docs/learning-defaults.md).
 */
const FROZENLAKE_FROM_DEMONSTRATIONS: Recipe = {
  ...FROM_DEMONSTRATIONS,
  model: { ...SMALL_MODEL.model, dModel: 64, heads: 4 },
  // RAGEN's lake is slippery (the config's default): RL at 0.0003 there. The non-slippery lake
  // imitates 10,000 steps and learns at the schema's rate, 0.001.
  training: { ...FROM_DEMONSTRATIONS.training, learningRate: 0.0003, warmup: { steps: 1600, batchSize: 128 } },
  where: { config: { slippery: false }, recipe: { training: { learningRate: 0.001, warmup: { steps: 10000 } } } },
};

/**
 * Sokoban from demonstrations needs more width, a longer warm-up and grid positions: d = 32 with
 * 400 steps imitates to 0.184, the random agent's level (0.181); d = 64 with 1200 steps to 0.332,
 * and 100 StarPO-S steps hold it (0.336, seed 1). The solver's plans ask the model to locate
 * player, box and target on a 6×6 grid every turn. Row and column embeddings on the grid's cells
 * (grid-positions.ts) give it those places directly: 0.605 after the warm-up and 0.673 after 100
 * StarPO-S steps, every seed at 0.609 or above (seeds 1–3: 0.582 → 0.633, 0.715 → 0.777,
 * 0.520 → 0.609; RAGEN's protocol). 128-turn batches instead of 64, as on FrozenLake, imitate
 * to 0.737 (0.727–0.750) and end at 0.766 (0.750–0.789) after 100 StarPO-S steps (seeds 1–3:
 * 0.727 → 0.758, 0.734 → 0.789, 0.750 → 0.750), every seed above the 64-turn recipe's mean,
 * for twice the imitation's time. The loss was still falling at 1,200 steps (0.093, seed 1):
 * 2,400 steps imitate to 0.796 (0.793–0.797) and end at 0.806 (0.793–0.820) after 100 StarPO-S
 * steps (seeds 1–3: 0.793 → 0.805, 0.797 → 0.820, 0.797 → 0.793), every seed above the
 * 1,200-step recipe's best, for twice the warm-up's time again. The loss still fell: 4,800 steps
 * imitate to 0.862 (0.859–0.867) and end at 0.865 (0.859–0.871) after 100 StarPO-S steps (seeds
 * 1–3: 0.867 → 0.863, 0.859 → 0.871, 0.859 → 0.859), every seed above the 2,400-step recipe's
 * best (docs/learning-defaults.md).
 */
const SOKOBAN_FROM_DEMONSTRATIONS: Recipe = {
  ...FROM_DEMONSTRATIONS,
  model: { ...SMALL_MODEL.model, dModel: 64, heads: 4, gridPositions: true },
  training: { ...FROM_DEMONSTRATIONS.training, warmup: { steps: 4800, batchSize: 128 } },
};

/**
 * Without an expert, self-imitation is what reads the grid (docs/training.md, "Algorithms"):
 * StarPO-S from the format warm-up, RAGEN's protocol and budget (100 steps), seed 1. Non-slippery
 * FrozenLake went 0.234 → 0.207 without it, 0.332 with 8 replay steps per update and 0.500 with
 * 16 (random agent 0.216; 0.487 over 3 seeds); Sokoban 0.191 → 0.242 with 16 (random 0.181,
 * 0.264 over 3 seeds; without it 0.176 → 0.172). The README's table has every seed.
 */
const SELF_IMITATION: Partial<AlgorithmConfig> = { selfImitationSteps: 16, selfImitationLearningRate: 0.003, selfImitationBufferSize: 2048 };
const FROM_FORMAT: Recipe = { ...SMALL_MODEL, algorithm: SELF_IMITATION };

/** The replay weighted by SIL's (R − V)+, V the group's success rate (below). */
const WEIGHTED_REPLAY: Partial<AlgorithmConfig> = { ...SELF_IMITATION, selfImitationSelect: 'advantage' };
/** 64 initial states of 4 rollouts a step, one action an answer (below). */
const ONE_ACTION_MORE_MAPS: Partial<RolloutConfig> = { ...FROM_FORMAT.rollout, groups: 64, groupSize: 4, maxActionsPerTurn: 1 };

/**
 * The replay learns from the maps the agent solved, and 8 maps a step (RAGEN's 8 × 16 rollouts)
 * show it 1,600 in 200 steps. On the non-slippery lake 64 maps of 4 episodes (256 episodes, the
 * schema's most) end the 200-step job at 0.697 (0.672–0.711, seeds 1–3) against 0.587
 * (0.555–0.621) with 8 × 16, for 1.2× the time a step: the replay's supervised steps, not the
 * rollouts, cost most of it. On the slippery lake, where a success is mostly the slips' luck, it
 * did not lift seed 1 (0.234 after 200 steps against 0.230), so that lake keeps RAGEN's rollout
 * (docs/learning-defaults.md).
 *
 * What the agent then fails at is holes: played 4 times on each evaluation map (bench/lake-failures),
 * 264 of its 299 failures end in one, and where the shortest path needs two directions it solves
 * 53-65% of the maps against 94-98% where it needs one. It picks the goal's side but not the
 * side without a hole, and it writes up to 5 actions before it sees where the first one led. At
 * one action an answer, as a served environment's recipe, it reads the lake after every move:
 * seed 1 reached 0.762 by step 100 (0.617 with 5 a turn), and the 200-step job ends at 0.737
 * (0.719-0.766, seeds 1-3; 0.706 at the table's 100 steps, against 0.557). Five turns of one
 * action reach every map whose shortest path is 5 actions or fewer, 95.7% of the evaluation
 * maps: the optimum within the job's budgets. The slippery lake was not screened so.
 *
 * Its replay then drew mostly the maps it already solved: a map every rollout solves adds four
 * successes a step, one it solves once in four adds one. Weighting each success by SIL's (R − V)+,
 * with its group's success rate as V (`selfImitationSelect: 'advantage'`), replays the rare
 * successes most and leaves the always-solved maps out: the 200-step job ends at 0.802
 * (0.777–0.816, seeds 1–3) against 0.737, and 0.727 (0.645–0.789) at the table's 100 steps
 * against 0.706. GiGPO's step advantages, which the rollouts' shared states allow at one action
 * an answer, reached 0.764 (0.742–0.789), and the two together less on seed 1 (0.750 against
 * 0.813), so the update stays StarPO-S's (docs/learning-defaults.md).
 *
 * The slippery lake takes the same with ten turns of one action: RAGEN's 10 actions, each seen
 * before the next (at five turns of one action its optimum is 29.6%). The 200-step job ends at
 * 0.280 (0.258–0.297, seeds 1–3) against 0.243 (0.227–0.273) with RAGEN's rollout and five
 * actions a turn, the random agent at 0.220 and 0.215, for about twice the time a step;
 * re-planning the shortest path after every move would reach 0.366, and the optimum is 0.504.
 *
 * On the slippery lake a success is mostly the slips' luck, so the replay learns little of the
 * shortest path that the lake without slips teaches by step 100. The first half of the RL steps
 * now play the same maps without slips (training.curriculumShare; evaluation stays slippery):
 * the 200-step job ends at 0.366 (0.355–0.379, seeds 1–3) against 0.280, the level of the
 * shortest path re-planned after every move, in 1,964–2,012 s against 1,678–2,664 s
 * (docs/learning-defaults.md).
 */
const FROZENLAKE_FROM_FORMAT: Recipe = {
  ...FROM_FORMAT,
  algorithm: WEIGHTED_REPLAY,
  rollout: ONE_ACTION_MORE_MAPS,
  where: { config: { slippery: true }, recipe: { rollout: { maxTurns: 10 }, training: { curriculumShare: 0.5, curriculumConfig: { slippery: false } } } },
};

/**
 * Sokoban takes the slippery lake's rollout without its curriculum: ten turns of one action (RAGEN's
 * 10 actions, each seen before the next), 64 × 4, the replay weighted by advantage, and reads the
 * room with row and column embeddings on its cells (gridPositions), as its imitation of the solver
 * does. The 200-step job ends at 0.556 (0.512–0.629, seeds 1–3; random agent 0.178 at these
 * budgets); without the embeddings at 0.475 (0.441–0.512), every seed lower (0.473, 0.512, 0.441
 * against 0.629, 0.527, 0.512). That rollout ended seed 1 at 0.473 where the recipe before it
 * ended at 0.367 after 200 steps, for about 2.5 times the time. Before, with
 * RAGEN's 8 × 16 of up to 5 actions a turn, 32 replay steps per update reached 0.328 (0.301–0.348,
 * seeds 1–3) after 100 StarPO-S steps against 0.264 (0.219–0.332) with 16 (random agent 0.181 on
 * the same seeds, RAGEN's protocol); docs/learning-defaults.md has the runs since.
 */
const SOKOBAN_FROM_FORMAT: Recipe = {
  ...FROM_FORMAT,
  model: { ...SMALL_MODEL.model, gridPositions: true },
  algorithm: WEIGHTED_REPLAY,
  rollout: { ...ONE_ACTION_MORE_MAPS, maxTurns: 10 },
};

/**
 * A served environment without an expert: the built-ins' recipe without one (the format warm-up
 * and 16 self-imitation steps, as FrozenLake's), with one action per answer. The format warm-up
 * writes 1-5 random actions per answer, and a policy that learned that plays several actions
 * before it reads what the first one did; on a server StarLab has not seen, an action's answer may
 * be what the next action needs. On the example game (guess a number from one to fifteen in four
 * guesses from "too low"/"too high" hints; bench/learning `--rows guess-number`, 200 steps,
 * seeds 1-3) the default with up to 5 actions a turn stayed at the random agent's level (0.23-0.27
 * at step 80-100), and with one it learned to follow the hints (docs/environments.md has the table).
 */
const SERVED_FROM_FORMAT: Recipe = { ...FROM_FORMAT, rollout: { ...FROM_FORMAT.rollout, maxActionsPerTurn: 1 } };

/**
 * A served environment's recipe: SERVED_FROM_FORMAT, or from the server's expert when it has one
 * (400 imitation steps; the expert's plan is spread over the turns left, as for the built-ins).
 */
export const SERVED_RECIPES: Readonly<Partial<Record<RecipeWarmup, Recipe>>> = { format: SERVED_FROM_FORMAT, demonstrations: FROM_DEMONSTRATIONS };

/** What the catalogue says of every recipe. */
export const RECIPE_DESCRIPTION =
  "RAGEN's protocol (its rooms, whole-episode history, update and evaluation) with StarLab's small model: 2 layers of width 32, " +
  'answers without <think> (RAGEN thinks; a model this small learned better without, see docs/results.md, which shows StarPO-S both ways), ' +
  'and a cosine learning-rate decay; from demonstrations, 400 warm-up steps (imitation over whole-episode contexts needs them), and on FrozenLake width 64 and 1600 warm-up steps of 128 turns (10000 on the non-slippery lake), which imitated and held measurably better, and on the slippery lake, whose demonstrations come from a turn expert near the best policy, an RL learning rate of 0.0003, at which RL holds the imitation instead of drifting from it; ' +
  'on lookup-qa from demonstrations, 3200 warm-up steps and each input carrying the previous token\'s embedding (model.config.tokenShift), without which the imitation copies a name from the search result but not the one after the question\'s relation, the first half of them on questions of at most two hops (training.warmup.curriculumShare), after which every seed measured had learned that lookup; ' +
  'on Sokoban from demonstrations, width 64, 4800 warm-up steps of 128 turns and row and column embeddings on the grid\'s cells (model.config.gridPositions), without which imitation stays far below RAGEN\'s SFT; ' +
  'on FrozenLake and Sokoban from the format warm-up (no expert), self-imitation: supervised replay steps on the agent\'s own successful training episodes after each update (16 a step), which is what lifted it above the random agent, and 64 initial states of 4 rollouts a step instead of 8 of 16, so that the replay learns from more maps, and one action per answer, so that the agent sees the grid after every move before the next (in ten turns on the slippery lake and Sokoban, RAGEN\'s 10 actions; the first half of the slippery lake\'s RL steps on the same maps without slips, training.curriculumShare), its replay drawing each success in proportion to how rarely its group succeeded (the weighting of self-imitation learning), and on Sokoban row and column embeddings on the grid\'s cells as from demonstrations; on a served environment without an expert, the format warm-up with 16 self-imitation steps and one action per answer, so that every action is answered before the next is chosen.';

/**
 * Per environment and warm-up kind. RAGEN's protocol (rooms, full history, update, evaluation)
 * is already the schema's default; a recipe only picks the model and its format.
 */
export const RECIPES: Readonly<Record<string, Partial<Record<RecipeWarmup, Recipe>>>> = {
  bandit: { format: SMALL_MODEL },
  sokoban: { format: SOKOBAN_FROM_FORMAT, demonstrations: SOKOBAN_FROM_DEMONSTRATIONS },
  frozenlake: { format: FROZENLAKE_FROM_FORMAT, demonstrations: FROZENLAKE_FROM_DEMONSTRATIONS },
  'lookup-qa': { format: SMALL_MODEL, demonstrations: LOOKUP_QA_FROM_DEMONSTRATIONS },
};

import { Static, TSchema, Type } from '@sinclair/typebox';
import { ALGORITHM_IDS } from '../algorithms/presets';
import { ENVIRONMENTS } from '../envs/registry';
import { CollapseRuleSchema } from '../signals/collapse';

const num = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Optional(Type.Number({ minimum, maximum, default: fallback, description }));
const int = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Optional(Type.Integer({ minimum, maximum, default: fallback, description }));
const bool = (fallback: boolean, description: string) => Type.Optional(Type.Boolean({ default: fallback, description }));
/** A learning-rate schedule (src/training/policy/lr-schedule.ts), constant unless a spec says otherwise. */
const lrSchedule = (description: string) => Type.Optional(Type.Union([Type.Literal('constant'), Type.Literal('cosine')], { default: 'constant', description }));
const section = <T extends TSchema>(schema: T) => Type.Optional(schema);
const strict = { additionalProperties: false, default: {} } as const;

/**
 * Largest batch of episodes one step may play (groups × groupSize). With the other bounds, one
 * step of the largest job a spec can describe runs in minutes on a CPU worker
 * (`npm run test:capacity`); memory is bounded by chunking whatever the batch.
 */
export const MAX_EPISODES_PER_STEP = 256;

export const ModelConfigSchema = Type.Object(
  {
    layers: int(1, 4, 2, 'transformer blocks'),
    dModel: int(16, 128, 64, 'width of the residual stream (multiple of heads)'),
    heads: int(1, 8, 2, 'attention heads'),
    ffnMultiplier: int(1, 4, 4, 'feed-forward width as a multiple of dModel'),
    contextLength: Type.Optional(
      Type.Integer({
        minimum: 32,
        maximum: 512,
        description: 'positions the model attends over: history + observation + response. Default: a whole episode under the rollout budget (at most 512); longer episodes drop their oldest turns',
      }),
    ),
    rope: bool(true, 'rotary position embeddings besides the learned ones (relative offsets, e.g. grid neighbours)'),
    // No default, so the resolved spec of a job that leaves it out is what it was before the knob.
    gridPositions: Type.Optional(Type.Boolean({ description: 'row and column embeddings on the cells of rendered observations (where a cell sits in the grid, whatever the history before it); off when absent' })),
    tiedEmbeddings: Type.Optional(Type.Boolean({ description: 'the output head reads the token embeddings (logits = h · Eᵀ), so copying a name out of the observation works for every name; off when absent' })),
    tokenShift: Type.Optional(Type.Boolean({ description: "each position's input also carries the previous token's embedding (a token shift), so recalling the name after a word needs one attention lookup; off when absent" })),
  },
  strict,
);

export const RolloutSchema = Type.Object(
  {
    groups: int(1, 64, 8, 'initial states per step (prompts)'),
    groupSize: int(1, 32, 16, 'rollouts per initial state'),
    maxTurns: int(1, 10, 5, 'turns per episode'),
    maxActionsPerTurn: int(1, 10, 5, 'actions executed per turn at most'),
    maxActionsPerEpisode: int(1, 50, 10, 'actions executed per episode at most'),
    temperature: num(0.05, 2, 1, 'sampling temperature of the rollouts'),
    maxTokensPerTurn: int(4, 48, 32, 'tokens generated per turn at most'),
    think: bool(true, 'responses carry <think>…</think> before <answer>…</answer>'),
    historyTurns: int(0, 20, 20, 'past turns shown to the policy at most (then cut to the context window)'),
    historyFormat: Type.Optional(
      Type.Union([Type.Literal('ragen'), Type.Literal('sign')], {
        default: 'ragen',
        description: "ragen: each past turn with its actions left, whole response and numeric reward, as RAGEN's context manager; sign: only the reward's sign (jobs stored before the ragen history)",
      }),
    ),
    formatPenalty: num(-10, 0, -0.1, 'reward added to a turn with a malformed response or an invalid action'),
  },
  strict,
);

export const WarmupSchema = Type.Object(
  {
    kind: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('none'), Type.Literal('format'), Type.Literal('demonstrations')], {
        default: 'auto',
        description: 'format: well-formed responses with random actions; demonstrations: imitate the expert; auto: demonstrations where the environment has an expert, else format',
      }),
    ),
    steps: int(0, 20000, 150, 'supervised steps'),
    batchSize: int(1, 512, 64, 'turns per supervised step'),
    learningRate: num(1e-6, 0.1, 3e-3, 'learning rate of the warm-up'),
    lrSchedule: lrSchedule("cosine: decay the warm-up's learning rate to 10% over its steps"),
    worldModelCoef: num(0, 10, 0, "weight of a world-model loss during the warm-up: predicting what the environment wrote after each scripted response (reward, next observation); 0 disables"),
    curriculumShare: num(0, 1, 0, "share of the warm-up's steps, from its first, whose episodes come from curriculumConfig over environment.config (an easier task first); 0 disables"),
    curriculumConfig: Type.Optional(
      Type.Object({}, { additionalProperties: true, default: {}, description: "environment config fields over environment.config for the warm-up's first curriculumShare of its steps (e.g. lookup-qa's maxHops: 2)" }),
    ),
  },
  strict,
);

export const TrainingSchema = Type.Object(
  {
    steps: int(1, 10000, 200, 'RL steps'),
    seed: int(0, 2147483647, 1, 'seed of every random draw in the job'),
    learningRate: num(1e-7, 0.1, 1e-3, 'actor learning rate (Adam)'),
    lrSchedule: lrSchedule('cosine: decay the actor and critic learning rates to 10% over the RL steps'),
    evalEvery: int(0, 10000, 10, 'evaluate every N steps (0: after the warm-up and at the end only)'),
    evalEpisodes: int(1, 1024, 256, "evaluation episodes, one per fixed held-out seed (RAGEN's 256)"),
    evalTemperature: num(0, 2, 0.5, "sampling temperature of evaluation (RAGEN's 0.5; 0 = greedy): series eval/sampled/* (eval/greedy/* at 0)"),
    evalGreedy: bool(false, 'also evaluate greedily on the same seeds, as the separate series eval/greedy/*'),
    checkpointEvery: int(0, 10000, 20, 'checkpoint every N steps (0: at the end only)'),
    trajectoryTextSample: int(0, 1024, 8, 'trajectories per step whose full transcript is kept'),
    curriculumShare: num(0, 1, 0, 'share of the RL steps, from the first, whose episodes come from curriculumConfig over environment.config (an easier task first); evaluation is always on environment.config; 0 disables'),
    curriculumConfig: Type.Optional(
      Type.Object({}, { additionalProperties: true, default: {}, description: "environment config fields over environment.config for the first curriculumShare of the RL steps (e.g. FrozenLake's slippery: false)" }),
    ),
    warmup: section(WarmupSchema),
  },
  strict,
);

export const CollapseSchema = Type.Object(
  {
    action: Type.Optional(
      Type.Union([Type.Literal('warn'), Type.Literal('pause'), Type.Literal('stop'), Type.Literal('rollback')], {
        default: 'warn',
        description: 'what a collapse warning does to the job',
      }),
    ),
    rules: Type.Optional(Type.Array(CollapseRuleSchema, { maxItems: 32, default: [], description: 'overrides of the default detectors' })),
    rollback: section(
      Type.Object(
        {
          learningRateScale: num(0.01, 1, 0.5, 'rollback multiplies training.learningRate by this'),
          filterKeepFraction: Type.Optional(Type.Number({ minimum: 0.01, maximum: 1, description: 'rollback sets algorithm.config.filterKeepFraction (a stronger StarPO-S filter when smaller)' })),
          maxRollbacks: int(0, 10, 3, 'rollbacks before the job is stopped instead'),
        },
        strict,
      ),
    ),
  },
  strict,
);

/** The spec layout this code writes; 1 is how jobs stored before version 2 are read back. */
export const SPEC_VERSION = 2;

export const JobSpecSchema = Type.Object(
  {
    specVersion: Type.Optional(
      Type.Union([Type.Literal(1), Type.Literal(2)], {
        default: SPEC_VERSION,
        description: '2 (the default). 1 runs a complete resolved spec of a job stored before version 2 as it ran then (sign history, minibatches by count, Adam, hard Sokoban rooms, eval/success)',
      }),
    ),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._ -]*$' })),
    environment: Type.Object(
      {
        id: Type.Union(Object.keys(ENVIRONMENTS).map((id) => Type.Literal(id)), { description: 'environment id (GET /v1/environments)' }),
        config: Type.Optional(Type.Object({}, { additionalProperties: true, default: {} })),
      },
      { additionalProperties: false },
    ),
    algorithm: Type.Object(
      {
        id: Type.Union(ALGORITHM_IDS.map((id) => Type.Literal(id)), { description: 'algorithm preset (GET /v1/algorithms)' }),
        config: Type.Optional(Type.Object({}, { additionalProperties: true, default: {} })),
      },
      { additionalProperties: false },
    ),
    model: section(
      Type.Object(
        {
          id: Type.Optional(Type.Literal('transformer', { default: 'transformer' })),
          config: section(ModelConfigSchema),
        },
        strict,
      ),
    ),
    rollout: section(RolloutSchema),
    training: section(TrainingSchema),
    collapse: section(CollapseSchema),
    priority: int(-100, 100, 0, 'order among the owner’s own queued jobs (higher first)'),
    device: Type.Optional(
      Type.Union([Type.Literal('any'), Type.Literal('gpu'), Type.Literal('cpu')], { default: 'any', description: 'which workers may run the job' }),
    ),
    labels: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), Type.String({ maxLength: 256 }), {
        maxProperties: 32,
        default: {},
      }),
    ),
  },
  { additionalProperties: false },
);

export type JobSpecInput = Static<typeof JobSpecSchema>;
export type ModelConfig = Required<Static<typeof ModelConfigSchema>>;
export type SpecVersion = 1 | 2;
export type RolloutConfig = Required<Static<typeof RolloutSchema>>;
export type LrSchedule = TrainingConfig['lrSchedule'];
export type WarmupConfig = Required<Static<typeof WarmupSchema>>;
export type TrainingConfig = Required<Omit<Static<typeof TrainingSchema>, 'warmup'>> & { warmup: WarmupConfig };
export type CollapseConfig = Required<Omit<Static<typeof CollapseSchema>, 'rollback'>> & {
  rollback: { learningRateScale: number; filterKeepFraction?: number; maxRollbacks: number };
};

import { Static, Type } from '@sinclair/typebox';
import { MAX_AXIS_VALUES, MAX_EXPERIMENT_RUNS, MAX_GRID_AXES } from '../training/experiment/grid';
import { JobStatusSchema } from './jobs.dto';

const strict = { additionalProperties: false } as const;
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const CreateExperimentSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._ -]*$', description: 'its jobs are named `<name>-c<cell>-s<seed>`' }),
    base: Type.Record(Type.String(), Type.Unknown(), { description: 'a job spec (POST /v1/jobs) every run starts from; the grid sets its values' }),
    grid: Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_AXIS_VALUES }), {
      maxProperties: MAX_GRID_AXES,
      description:
        `spec path → the values it takes, e.g. {"algorithm.id": ["starpo-grpo", "starpo-s"], "training.seed": [1, 2, 3]}. ` +
        `The runs are every combination (at most ${MAX_EXPERIMENT_RUNS}); \`training.seed\` is the seeds axis, and a cell is a point of the other axes.`,
    }),
  },
  strict,
);
export type CreateExperimentBody = Static<typeof CreateExperimentSchema>;

export const ListExperimentsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size' })),
    after: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
    archived: Type.Optional(Type.Boolean({ default: false, description: 'true: only archived experiments; false (default): only the others' })),
  },
  strict,
);
export type ListExperimentsQuery = Static<typeof ListExperimentsQuerySchema>;

const Spread = Type.Object({ mean: Type.Number(), min: Type.Number(), max: Type.Number() }, { description: 'over the seeds: mean and range of evaluation success (0–1)' });

export const ExperimentRunSchema = Type.Object({
  jobId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  cell: Type.Integer(),
  seed: Type.Integer(),
  status: JobStatusSchema,
  currentStep: Type.Integer(),
  totalSteps: Type.Integer(),
  digest: Type.String({ description: 'what the run trains: equal digests, the same run (bench results carry the same digest after `#` in their id)' }),
  afterWarmup: Nullable(Type.Number({ description: 'evaluation success at step 0, right after the warm-up' })),
  afterRl: Nullable(Type.Number({ description: 'evaluation success at the last step' })),
  archived: Type.Boolean(),
});

export const ExperimentCellSchema = Type.Object({
  index: Type.Integer(),
  label: Type.String({ description: '`path=value` of each axis but the seeds' }),
  point: Type.Record(Type.String(), Type.Unknown()),
  seeds: Type.Array(Type.Integer()),
  finished: Type.Integer({ description: 'seeds whose run reached its last step' }),
  afterWarmup: Nullable(Spread),
  afterRl: Nullable(Spread),
  table: Type.String({ description: 'as the results tables print it: "after warm-up → after RL (min–max, n seeds)" in %, "…" until a seed finishes' }),
  random: Nullable(Type.Number({ description: 'a random well-formed agent on the same evaluation seeds and budgets' })),
  optimal: Nullable(Type.Number({ description: 'the optimal policy (FrozenLake, exact dynamic programming); null where none is computed' })),
  expert: Nullable(Type.Number({ description: 'the environment’s expert within the budgets; null without one' })),
  runs: Type.Array(ExperimentRunSchema),
});

export const ExperimentSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  owner: Type.Object({ id: Type.String(), name: Type.String() }),
  status: Type.Union(['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s)), {
    description: 'running while any job runs, else queued while any waits, else paused while any is paused; ended: succeeded if all did, failed if any failed, else cancelled',
  }),
  base: Type.Record(Type.String(), Type.Unknown()),
  grid: Type.Record(Type.String(), Type.Array(Type.Unknown())),
  jobs: Type.Integer(),
  metric: Type.String({ description: 'the evaluation series the table reads (RAGEN’s protocol: eval/sampled/success)' }),
  progress: Type.Object({
    jobs: Type.Integer(),
    byStatus: Type.Record(Type.String(), Type.Integer()),
    stepsDone: Type.Integer(),
    stepsTotal: Type.Integer(),
    fraction: Type.Number(),
  }),
  references: Type.Union([Type.Literal('ready'), Type.Literal('computing'), Type.Literal('failed')], { description: 'the random agent and optimum are computed once, off the request path' }),
  cells: Type.Array(ExperimentCellSchema),
  createdAt: Timestamp,
  archivedAt: Nullable(Timestamp),
  purgedAt: Nullable(Timestamp),
});
export type ExperimentView = Static<typeof ExperimentSchema>;
export type ExperimentCellView = Static<typeof ExperimentCellSchema>;
export type ExperimentRunView = Static<typeof ExperimentRunSchema>;

export const ExperimentSummarySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  owner: Type.Object({ id: Type.String(), name: Type.String() }),
  status: ExperimentSchema.properties.status,
  cells: Type.Integer(),
  jobs: Type.Integer(),
  progress: ExperimentSchema.properties.progress,
  createdAt: Timestamp,
  archivedAt: Nullable(Timestamp),
});
export type ExperimentSummaryView = Static<typeof ExperimentSummarySchema>;
export const ExperimentListSchema = Type.Object({ data: Type.Array(ExperimentSummarySchema), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) });
export type ExperimentListView = Static<typeof ExperimentListSchema>;

export const ExperimentCurvesQuerySchema = Type.Object(
  { metric: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_./@-]+$', description: 'a step metric (default: the evaluation series of the table)' })) },
  strict,
);
export type ExperimentCurvesQuery = Static<typeof ExperimentCurvesQuerySchema>;

export const ExperimentCurvesSchema = Type.Object({
  metric: Type.String(),
  cells: Type.Array(
    Type.Object({
      index: Type.Integer(),
      label: Type.String(),
      points: Type.Array(Type.Object({ step: Type.Integer(), mean: Type.Number(), min: Type.Number(), max: Type.Number(), n: Type.Integer({ description: 'seeds with a value at this step' }) })),
    }),
  ),
});
export type ExperimentCurvesView = Static<typeof ExperimentCurvesSchema>;

export const ExperimentActionSchema = Type.Object({
  experiment: ExperimentSummarySchema,
  jobs: Type.Array(
    Type.Object({
      jobId: Type.String({ format: 'uuid' }),
      status: JobStatusSchema,
      outcome: Type.Union([Type.Literal('done'), Type.Literal('requested'), Type.Literal('skipped')], {
        description: 'requested: recorded for the running attempt, which carries it out within seconds (the job shows it as `controlRequest`); skipped: the job’s state does not allow the action (it had ended, say)',
      }),
      detail: Type.Optional(Type.String()),
    }),
  ),
});
export type ExperimentActionView = Static<typeof ExperimentActionSchema>;

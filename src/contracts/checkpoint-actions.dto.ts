import { Static, Type } from '@sinclair/typebox';
import { ENVIRONMENTS } from '../training/envs/registry';

const strict = { additionalProperties: false } as const;
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const CheckpointId = Type.String({ format: 'uuid', description: 'a checkpoint of this job (GET /v1/jobs/{id}/checkpoints)' });

/** Most episodes one evaluation plays (episodes × k), so that one request cannot hold a worker for long. */
export const MAX_EVALUATION_EPISODES = 4096;

export const CreateEvaluationSchema = Type.Object(
  {
    checkpointId: Type.Optional({ ...CheckpointId, description: 'default: the job’s latest checkpoint' }),
    environment: Type.Optional(
      Type.Object(
        {
          id: Type.Optional(
            Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9-]*$', description: `a built-in (${Object.keys(ENVIRONMENTS).join(', ')}) or a registered environment (GET /v1/environments); default: the job’s environment` }),
          ),
          config: Type.Optional(
            Type.Record(Type.String(), Type.Unknown(), {
              description: 'on the job’s own environment: merged over the job’s config (e.g. `{"slippery": true}`); on another one: that environment’s config',
            }),
          ),
        },
        strict,
      ),
    ),
    episodes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, default: 256, description: 'held-out evaluation seeds played (the trainer’s eval seeds; RAGEN plays 256)' })),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: 16, default: 4, description: `samples per seed for pass@k (episodes × k at most ${MAX_EVALUATION_EPISODES})` })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, description: 'sampling temperature, 0 = greedy; default: the job’s training.evalTemperature' })),
  },
  strict,
);
export type CreateEvaluationBody = Static<typeof CreateEvaluationSchema>;

const EVALUATION_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

export const EvaluationSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  jobId: Type.String({ format: 'uuid' }),
  checkpointId: Nullable(Type.String({ format: 'uuid', description: 'null once checkpoint retention has deleted it' })),
  step: Type.Integer({ description: 'step of the evaluated checkpoint' }),
  status: Type.Union(EVALUATION_STATUSES.map((s) => Type.Literal(s)), { description: 'queued → running (on a worker) → succeeded | failed' }),
  environment: Type.Object({ id: Type.String(), config: Type.Record(Type.String(), Type.Unknown(), { description: 'resolved: every default filled in' }) }),
  episodes: Type.Integer(),
  k: Type.Integer(),
  temperature: Type.Number(),
  success: Nullable(Type.Number({ description: 'mean success over episodes × k' })),
  passAtK: Nullable(Type.Number({ description: 'share of seeds solved by at least one of their k samples' })),
  meanReturn: Nullable(Type.Number()),
  formatValid: Nullable(Type.Number({ description: 'share of turns with a well-formed response naming valid actions' })),
  samples: Type.Array(Type.String(), { description: 'transcripts of the first sample of the first seeds' }),
  error: Nullable(Type.String()),
  worker: Nullable(Type.String()),
  durationMs: Nullable(Type.Integer()),
  createdAt: Timestamp,
  startedAt: Nullable(Timestamp),
  finishedAt: Nullable(Timestamp),
});
export type EvaluationView = Static<typeof EvaluationSchema>;
export const EvaluationListSchema = Type.Object({ data: Type.Array(EvaluationSchema) });
export type EvaluationListView = Static<typeof EvaluationListSchema>;

export const ForkJobSchema = Type.Object(
  {
    checkpointId: Type.Optional({ ...CheckpointId, description: 'default: the job’s latest checkpoint' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._ -]*$', description: 'default: `<source name>-fork-<step>`' })),
    overrides: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'job spec fields merged over the source’s resolved spec (objects key by key), e.g. `{"training": {"learningRate": 0.0005, "steps": 400}}`. ' +
          'Fields that would change the model (model.config, environment.id, rollout.historyFormat, an added critic or KL reference) are refused.',
      }),
    ),
  },
  strict,
);
export type ForkJobBody = Static<typeof ForkJobSchema>;

export const RollbackJobSchema = Type.Object(
  {
    checkpointId: Type.Optional({ ...CheckpointId, description: 'default: the job’s newest healthy checkpoint' }),
    learningRate: Type.Optional(Type.Number({ minimum: 1e-7, maximum: 0.1, description: 'training.learningRate from there on (default: unchanged)' })),
  },
  strict,
);
export type RollbackJobBody = Static<typeof RollbackJobSchema>;

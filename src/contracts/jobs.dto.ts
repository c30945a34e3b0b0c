import { Static, Type } from '@sinclair/typebox';

const JOB_STATUSES = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export const JobStatusSchema = Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)));
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const ListJobsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size' })),
    after: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
    status: Type.Optional(JobStatusSchema),
    owner: Type.Optional(Type.String({ maxLength: 128, description: 'owner user id or name (admins; team-mates with shared jobs)' })),
    label: Type.Optional(Type.String({ maxLength: 300, pattern: '^[A-Za-z0-9_.-]{1,64}=.{0,256}$', description: 'key=value' })),
  },
  { additionalProperties: false },
);
export type ListJobsQuery = Static<typeof ListJobsQuerySchema>;

export const JobSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  owner: Type.Object({ id: Type.String(), name: Type.String() }),
  status: JobStatusSchema,
  priority: Type.Integer(),
  device: Type.Union([Type.Literal('gpu'), Type.Literal('cpu'), Type.Literal('any')]),
  labels: Type.Record(Type.String(), Type.String()),
  progress: Type.Number({ description: 'completed steps / total steps' }),
  currentStep: Type.Integer({ description: 'last completed step (0 = warm-up done)' }),
  totalSteps: Type.Integer(),
  attempt: Type.Integer({ description: 'times the job has been started (resumes included)' }),
  backend: Nullable(Type.String()),
  worker: Nullable(Type.String()),
  error: Nullable(Type.String()),
  latestMetrics: Nullable(Type.Record(Type.String(), Type.Number())),
  queue: Nullable(
    Type.Object({
      position: Type.Integer({ description: '1 = next to be dispatched' }),
      reason: Type.String(),
    }),
  ),
  spec: Type.Record(Type.String(), Type.Unknown(), { description: 'the validated spec with every default filled in' }),
  warmup: Nullable(
    Type.Object(
      {
        kind: Type.String({ description: 'format | demonstrations' }),
        steps: Type.Integer(),
        completed: Type.Integer({ description: 'supervised steps done (reported every 25 while it runs)' }),
        etaSeconds: Nullable(Type.Number({ description: 'while it runs: seconds left, at its pace so far' })),
      },
      { description: 'the supervised warm-up before RL step 1; null without one' },
    ),
  ),
  eta: Nullable(
    Type.Object(
      {
        seconds: Type.Number({ description: 'until the last step, at the pace of the newest steps' }),
        finishAt: Timestamp,
        secondsPerStep: Type.Number(),
      },
      { description: 'running jobs once two RL steps have been timed; null otherwise' },
    ),
  ),
  forkedFrom: Nullable(Type.Object({ jobId: Type.String({ format: 'uuid' }), step: Type.Integer({ description: 'step of the checkpoint it started from' }) }, { description: 'a fork: the job and checkpoint step it continues' })),
  createdAt: Timestamp,
  startedAt: Nullable(Timestamp),
  finishedAt: Nullable(Timestamp),
});
export type JobView = Static<typeof JobSchema>;

export const JobListSchema = Type.Object({
  data: Type.Array(JobSchema),
  has_more: Type.Boolean(),
  next_cursor: Nullable(Type.String()),
});
export type JobListView = Static<typeof JobListSchema>;

export const MetricsQuerySchema = Type.Object(
  {
    names: Type.Optional(Type.String({ maxLength: 2000, description: 'comma-separated metric names (default: all)' })),
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'first step (inclusive)' })),
    to: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'last step (inclusive)' })),
  },
  { additionalProperties: false },
);
export type MetricsQuery = Static<typeof MetricsQuerySchema>;

export const MetricSeriesSchema = Type.Object({
  data: Type.Array(Type.Object({ step: Type.Integer(), metrics: Type.Record(Type.String(), Type.Number()) })),
});
export type MetricSeriesView = Static<typeof MetricSeriesSchema>;

export const EventsQuerySchema = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, description: 'only events with a larger id' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuerySchema>;

export const JobEventSchema = Type.Object({
  id: Type.Integer({ description: 'increasing per job; the SSE event id' }),
  type: Type.String({ description: 'state | step | checkpoint | warning | log | audit' }),
  message: Type.String(),
  data: Type.Unknown(),
  createdAt: Timestamp,
});
export type JobEventView = Static<typeof JobEventSchema>;
export const JobEventListSchema = Type.Object({ data: Type.Array(JobEventSchema), has_more: Type.Boolean() });
export type JobEventListView = Static<typeof JobEventListSchema>;

export const TrajectoriesQuerySchema = Type.Object(
  {
    step: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'only this step; without step, from and to: the latest step that has trajectories' })),
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'first step of a range (inclusive)' })),
    to: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'last step of a range (inclusive)' })),
    success: Type.Optional(Type.Boolean()),
    minReturn: Type.Optional(Type.Number({ minimum: -1e6, maximum: 1e6 })),
    withText: Type.Optional(Type.Boolean({ description: 'only trajectories whose transcript was kept' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    after: Type.Optional(Type.String({ maxLength: 40, description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type TrajectoriesQuery = Static<typeof TrajectoriesQuerySchema>;

export const TrajectorySchema = Type.Object({
  id: Type.String(),
  step: Type.Integer(),
  group: Type.Integer(),
  sample: Type.Integer(),
  envSeed: Type.String({ description: 'decimal; up to 2^32' }),
  return: Type.Number(),
  success: Type.Boolean(),
  turns: Type.Integer(),
  actions: Type.Integer(),
  formatErrors: Type.Integer(),
  tokens: Type.Integer(),
  meanEntropy: Type.Number(),
  text: Nullable(Type.String()),
});
export const TrajectoryListSchema = Type.Object({ data: Type.Array(TrajectorySchema), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) });
export type TrajectoryListView = Static<typeof TrajectoryListSchema>;

export const CheckpointSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  jobId: Type.String({ format: 'uuid' }),
  step: Type.Integer(),
  sizeBytes: Type.Integer(),
  health: Type.Union(['healthy', 'suspect', 'unhealthy', 'unknown'].map((h) => Type.Literal(h))),
  createdAt: Timestamp,
  downloadUrl: Type.String(),
});
export const CheckpointListSchema = Type.Object({ data: Type.Array(CheckpointSchema) });
export type CheckpointListView = Static<typeof CheckpointListSchema>;

import { Static, Type } from '@sinclair/typebox';

/** A job's states (how they follow each other: src/services/job-lifecycle.ts). */
export const JOB_STATUSES = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const JobStatusSchema = Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)));
/** The longest Idempotency-Key header (visible ASCII) a submission may carry. */
export const IDEMPOTENCY_KEY_MAX = 255;

/** What a user or an admin asked of a running job, until its attempt obeys. */
export const CONTROL_REQUESTS = ['cancel', 'pause', 'preempt'] as const;
export type ControlRequest = (typeof CONTROL_REQUESTS)[number];
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const ListJobsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size' })),
    after: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
    status: Type.Optional(JobStatusSchema),
    owner: Type.Optional(Type.String({ maxLength: 128, description: 'owner user id or name (admins; team-mates with shared jobs)' })),
    label: Type.Optional(Type.String({ maxLength: 300, pattern: '^[A-Za-z0-9_.-]{1,64}=.{0,256}$', description: 'key=value' })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'jobs whose name contains this text (case-insensitive)' })),
    environment: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'jobs on this environment id' })),
    forkedFrom: Type.Optional(Type.String({ format: 'uuid', description: 'forks of this job' })),
    experiment: Type.Optional(Type.String({ format: 'uuid', description: 'the jobs of this experiment' })),
    archived: Type.Optional(Type.Boolean({ default: false, description: 'true: only archived jobs (DELETE /v1/jobs/{id}); false (default): only the others' })),
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
  controlRequest: Nullable(Type.Union(CONTROL_REQUESTS.map((c) => Type.Literal(c)), { description: 'a cancel, pause or preempt the running attempt has not obeyed yet (it does within seconds)' })),
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
        completed: Type.Integer({ description: 'supervised steps done (reported every 10 while it runs)' }),
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
  experiment: Nullable(Type.Object({ id: Type.String({ format: 'uuid' }), cell: Type.Integer() }, { description: 'a run of an experiment: the experiment and its cell' })),
  archivedAt: Nullable(Type.String({ format: 'date-time', description: 'archived: hidden from lists (GET /v1/jobs?archived=true shows it); results kept' })),
  purgedAt: Nullable(Type.String({ format: 'date-time', description: 'purged: results and checkpoints deleted' })),
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
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only events with a larger id' })),
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

export const WarmupViewSchema = Type.Object({
  kind: Type.String({ description: 'none | format | demonstrations' }),
  steps: Type.Integer({ description: 'supervised steps of the warm-up (0 without one)' }),
  state: Type.Union(['none', 'pending', 'running', 'done'].map((s) => Type.Literal(s)), { description: 'pending: not started; running: reports coming in; done: step 0 (the evaluation after it) is stored' }),
  reused: Nullable(Type.Boolean({ description: 'the worker took it from its warm-up cache instead of training it' })),
  completed: Type.Integer({ description: 'supervised steps done' }),
  etaSeconds: Nullable(Type.Number({ description: 'while it runs: seconds left, at its pace so far' })),
  seconds: Nullable(Type.Number({ description: 'once done: how long it took' })),
  loss: Type.Array(Type.Object({ step: Type.Integer(), loss: Type.Number({ description: 'mean supervised loss over the steps since the previous point' }) }), {
    description: 'the loss curve of the warm-up, a point every 10 supervised steps (the newest attempt’s, for a job that resumed)',
  }),
  finalLoss: Nullable(Type.Number({ description: 'mean loss over its last 10 steps (step 0’s warmup/loss)' })),
});
export type WarmupView = Static<typeof WarmupViewSchema>;

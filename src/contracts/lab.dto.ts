import { Static, Type } from '@sinclair/typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const QueueQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'waiting jobs per page' })),
    after: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type QueueQuery = Static<typeof QueueQuerySchema>;

export const QueueViewSchema = Type.Object({
  capacity: Type.Record(Type.String(), Type.Object({ slots: Type.Integer(), busy: Type.Integer() }), { description: 'by kind of worker (gpu, cpu)' }),
  workers: Type.Array(Type.Object({ id: Type.String(), device: Type.String(), backend: Type.String(), slots: Type.Integer(), running: Type.Integer(), lastHeartbeatAt: Type.String() })),
  waiting: Type.Array(
    Type.Object({
      position: Type.Integer(),
      owner: Type.String(),
      jobId: Nullable(Type.String({ description: 'shown for your own jobs (admins: all)' })),
      device: Type.String(),
      priority: Type.Integer(),
      reason: Type.String(),
      admitted: Type.Boolean({ description: 'already handed to a worker queue' }),
    }),
  ),
  has_more: Type.Boolean({ description: 'more waiting jobs follow this page' }),
  next_cursor: Nullable(Type.String({ description: 'pass as `after` for the next page of waiting jobs (positions as the plan stands then)' })),
  running: Type.Array(Type.Object({ owner: Type.String(), jobId: Nullable(Type.String()), worker: Nullable(Type.String()), currentStep: Type.Integer(), totalSteps: Type.Integer() })),
  users: Type.Array(Type.Object({ owner: Type.String(), active: Type.Integer(), maxRunning: Type.Integer(), decayedUsageSlotSeconds: Type.Number() })),
});
export type QueueView = Static<typeof QueueViewSchema>;

export const UsageQuerySchema = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'default: 7 days ago' })),
    to: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'default: now' })),
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuerySchema>;

export const UsageViewSchema = Type.Object({
  from: Type.String(),
  to: Type.String(),
  data: Type.Array(
    Type.Object({
      user: Type.Object({ id: Type.String(), name: Type.String() }),
      slotSeconds: Type.Number(),
      byDevice: Type.Record(Type.String(), Type.Number()),
      jobs: Type.Integer(),
      attempts: Type.Integer(),
      share: Type.Number({ description: 'of all slot-seconds in the period (admins: over every user)' }),
    }),
  ),
});
export type UsageView = Static<typeof UsageViewSchema>;

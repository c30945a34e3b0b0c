import { Static, Type } from '@sinclair/typebox';

/** What an audit event records (job actions are `audit` job events instead). */
export const AUDIT_ACTIONS = ['user.create', 'user.update', 'user.disable', 'user.enable', 'team.create', 'team.update', 'api_key.issue', 'api_key.revoke', 'environment.register', 'environment.delete'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const AUDIT_TARGET_TYPES = ['user', 'team', 'api_key', 'environment'] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

const Timestamp = Type.String({ format: 'date-time' });
const AuditActionSchema = Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a)));

export const ListAuditQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size' })),
    after: Type.Optional(Type.String({ maxLength: 40, description: 'next_cursor of the previous page' })),
    action: Type.Optional(AuditActionSchema),
    actorId: Type.Optional(Type.String({ format: 'uuid', description: 'id of the user who acted' })),
    targetId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'id of the user, team or API key acted on' })),
    since: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'only events at or after this time' })),
  },
  { additionalProperties: false },
);
export type ListAuditQuery = Static<typeof ListAuditQuerySchema>;

export const AuditEventSchema = Type.Object({
  id: Type.String({ description: 'decimal; increases with every event' }),
  createdAt: Timestamp,
  actorId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null: the service itself (STARLAB_ADMIN_KEY at start-up)' }),
  actorName: Type.String(),
  action: AuditActionSchema,
  targetType: Type.Union(AUDIT_TARGET_TYPES.map((t) => Type.Literal(t))),
  targetId: Type.String(),
  message: Type.String({ description: 'the sentence also logged as an `audit:` line' }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the changed fields' }),
});
export type AuditEventView = Static<typeof AuditEventSchema>;

export const AuditEventListSchema = Type.Object({
  data: Type.Array(AuditEventSchema),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type AuditEventListView = Static<typeof AuditEventListSchema>;

import { Static, Type } from '@sinclair/typebox';
import { IssuedApiKeySchema } from './api-keys.dto';

/** User and team names: what people type in curl and see in listings. */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*$';
const Name = (options: { description?: string } = {}) => Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN, ...options });
const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('member')]);
const Timestamp = Type.String({ format: 'date-time' });

/** Per-user quota bounds (those of the service defaults, STARLAB_MAX_RUNNING_JOBS / STARLAB_MAX_QUEUED_JOBS); a user without a value gets the default. */
export const QUOTA_BOUNDS = {
  maxRunningJobs: { minimum: 1, maximum: 1000, description: 'jobs of the user running at once' },
  maxQueuedJobs: { minimum: 1, maximum: 100_000, description: 'queued jobs of the user at once (a submission beyond it is a 429)' },
} as const;

export const CreateUserSchema = Type.Object(
  {
    name: Name(),
    role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('member')], { default: 'member' })),
    team: Type.Optional(Name({ description: 'created if new' })),
    maxRunningJobs: Type.Optional(Type.Integer({ ...QUOTA_BOUNDS.maxRunningJobs, description: `${QUOTA_BOUNDS.maxRunningJobs.description}; omitted = the service default` })),
    maxQueuedJobs: Type.Optional(Type.Integer({ ...QUOTA_BOUNDS.maxQueuedJobs, description: `${QUOTA_BOUNDS.maxQueuedJobs.description}; omitted = the service default` })),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserSchema>;

const nullableQuota = (name: keyof typeof QUOTA_BOUNDS) =>
  Type.Union([Type.Integer({ minimum: QUOTA_BOUNDS[name].minimum, maximum: QUOTA_BOUNDS[name].maximum }), Type.Null()], {
    description: `${QUOTA_BOUNDS[name].description}; null = the service default`,
  });

export const UpdateUserSchema = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    team: Type.Optional(Type.Union([Name(), Type.Null()], { description: 'team name (created if new); null = no team' })),
    maxRunningJobs: Type.Optional(nullableQuota('maxRunningJobs')),
    maxQueuedJobs: Type.Optional(nullableQuota('maxQueuedJobs')),
  },
  { additionalProperties: false },
);
export type UpdateUserBody = Static<typeof UpdateUserSchema>;

export const UserSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: RoleSchema,
  team: Type.Union([Type.String(), Type.Null()]),
  teamId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  maxRunningJobs: Type.Union([Type.Integer(), Type.Null()], { description: 'null = the service default' }),
  maxQueuedJobs: Type.Union([Type.Integer(), Type.Null()], { description: 'null = the service default' }),
  disabledAt: Type.Union([Timestamp, Type.Null()], { description: 'a disabled user’s keys are refused' }),
  createdAt: Timestamp,
});
export type UserView = Static<typeof UserSchema>;

export const UserListSchema = Type.Object({ data: Type.Array(UserSchema) });
export type UserListView = Static<typeof UserListSchema>;

/** GET /v1/users/me: who the API key belongs to. */
export const PrincipalSchema = Type.Object({ id: Type.String(), name: Type.String(), role: Type.String(), teamId: Type.Union([Type.String(), Type.Null()]) });
export type PrincipalView = Static<typeof PrincipalSchema>;

export const CreatedUserSchema = Type.Object({ user: UserSchema, apiKey: IssuedApiKeySchema });
export type CreatedUserView = Static<typeof CreatedUserSchema>;

import { Static, Type } from '@sinclair/typebox';

export const CreateUserSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('member')], { default: 'member' })),
    team: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'created if new' })),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserSchema>;

export const UserSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
  team: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});
export type UserView = Static<typeof UserSchema>;

export const IssuedApiKeySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'shown in listings; the key itself is never shown again' }),
  key: Type.String({ description: 'the secret: send as Authorization: Bearer <key>' }),
  createdAt: Type.String({ format: 'date-time' }),
});

export const CreatedUserSchema = Type.Object({ user: UserSchema, apiKey: IssuedApiKeySchema });

import { Static, Type } from '@sinclair/typebox';

const Timestamp = Type.String({ format: 'date-time' });
const UserRef = Type.String({ minLength: 1, maxLength: 128, description: 'user id or name (admins: anyone; members: only themselves)' });

export const CreateApiKeySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: 'what the key is for, e.g. "laptop" or "ci"' }),
    user: Type.Optional(UserRef),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeySchema>;

export const ListApiKeysQuerySchema = Type.Object({ user: Type.Optional(UserRef) }, { additionalProperties: false });
export type ListApiKeysQuery = Static<typeof ListApiKeysQuerySchema>;

export const IssuedApiKeySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'shown in listings; the key itself is never shown again' }),
  key: Type.String({ description: 'the secret: send as Authorization: Bearer <key>' }),
  createdAt: Timestamp,
});
export type IssuedApiKeyView = Static<typeof IssuedApiKeySchema>;

export const ApiKeySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  userId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key; the key itself is not stored' }),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'updated at most once a minute' }),
  revokedAt: Type.Union([Timestamp, Type.Null()], { description: 'a revoked key is refused at once' }),
  current: Type.Boolean({ description: 'the key this request was made with' }),
});
export type ApiKeyView = Static<typeof ApiKeySchema>;

export const ApiKeyListSchema = Type.Object({ data: Type.Array(ApiKeySchema) });
export type ApiKeyListView = Static<typeof ApiKeyListSchema>;

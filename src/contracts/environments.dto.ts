import { Static, Type } from '@sinclair/typebox';

const Word = Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S+$' });

/** OpenEnv has no manifest: where its text and actions are, and the action set. */
export const OpenEnvMappingSchema = Type.Object(
  {
    observationField: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'field of the observation object that holds its text' }),
    actionField: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'field of the action object that carries the action word' }),
    actions: Type.Array(Word, { minItems: 1, maxItems: 256, description: 'the action set' }),
    vocabulary: Type.Optional(Type.Array(Word, { maxItems: 1024, description: 'words the observations are made of (each one token)' })),
    maxTurns: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

/** POST /v1/environments (admins). */
export const RegisterEnvironmentSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9-]*$', description: 'the name jobs give as environment.id (lower-case letters, digits, -)' }),
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'the server’s base URL (http(s)://; ws(s):// also for openenv)' }),
    protocol: Type.Optional(Type.Union([Type.Literal('starlab'), Type.Literal('openenv')], { default: 'starlab' })),
    openenv: Type.Optional(OpenEnvMappingSchema),
  },
  { additionalProperties: false },
);
export type RegisterEnvironmentBody = Static<typeof RegisterEnvironmentSchema>;

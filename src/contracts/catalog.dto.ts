import { Static, Type } from '@sinclair/typebox';

/** A registered environment's server (POST /v1/environments). */
export const EnvironmentServerSchema = Type.Object({
  protocol: Type.Union([Type.Literal('starlab'), Type.Literal('openenv')]),
  url: Type.String(),
  digest: Type.String({ description: 'sha-256 of the manifest read at registration' }),
  fork: Type.Boolean({ description: 'the server copies episodes (arpo and aepo need it)' }),
  registeredBy: Type.String({ description: 'the admin who registered it' }),
  registeredAt: Type.String({ format: 'date-time' }),
});

/** GET /v1/environments: what can be trained, with the JSON Schema of each config. */
export const EnvironmentSchema = Type.Object({
  id: Type.String(),
  description: Type.String(),
  actions: Type.Array(Type.String()),
  symbols: Type.Record(Type.String(), Type.String()),
  hasExpert: Type.Boolean({ description: 'demonstrations warm-up available' }),
  configSchema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of environment.config' }),
  defaults: Type.Record(Type.String(), Type.Unknown()),
  rolloutDefaults: Type.Record(Type.String(), Type.Unknown()),
  recipes: Type.Record(
    Type.String(),
    Type.Object({
      description: Type.String(),
      spec: Type.Record(Type.String(), Type.Unknown(), { description: 'spec sections a job gets by default with this warm-up kind (its own values win)' }),
      where: Type.Optional(
        Type.Object(
          { config: Type.Record(Type.String(), Type.Unknown()), spec: Type.Record(Type.String(), Type.Unknown()) },
          { description: "sections merged over `spec` where the environment's config (its defaults filled in) has these values" },
        ),
      ),
    }),
    { description: 'per warm-up kind: the measured recipe a job gets by default (model, answer format, schedule)' },
  ),
  server: Type.Union([EnvironmentServerSchema, Type.Null()], { description: 'null for a built-in; the server of a registered environment' }),
});
export type EnvironmentView = Static<typeof EnvironmentSchema>;

/** GET /v1/algorithms: the presets over one algorithm config. */
export const AlgorithmSchema = Type.Object({
  id: Type.String(),
  description: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'the preset’s values' }),
  configSchema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of algorithm.config' }),
});
export type AlgorithmView = Static<typeof AlgorithmSchema>;

import { Static, Type } from '@sinclair/typebox';

export const HealthSchema = Type.Object({ status: Type.Literal('ok') });

/** GET /ready: answered 503 unless both are up. */
export const ReadinessSchema = Type.Object({ status: Type.String(), database: Type.String(), redis: Type.String() });
export type ReadinessView = Static<typeof ReadinessSchema>;

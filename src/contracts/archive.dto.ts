import { Static, Type } from '@sinclair/typebox';

/** DELETE /v1/jobs/{id} and /v1/experiments/{id}. */
export const ArchiveQuerySchema = Type.Object(
  { purge: Type.Optional(Type.Boolean({ default: false, description: 'also delete the results and checkpoints (the owner or an admin); the record stays, marked purged' })) },
  { additionalProperties: false },
);
export type ArchiveQuery = Static<typeof ArchiveQuerySchema>;

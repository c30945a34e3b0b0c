import type { TSchema } from '@sinclair/typebox';

/** A TypeBox schema as plain JSON Schema (TypeBox marks its objects with symbol keys). */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

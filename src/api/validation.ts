import type { TSchema, Static } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { checkAgainst } from '../training/spec/errors';
import { ValidationFailed } from '../services/errors';

// TypeBox rejects values of formats it does not know; register the ones the API uses.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v) && !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));

/**
 * Checks a request body or query against its schema, filling defaults. Query strings are
 * converted to the schema's types first ("20" → 20, "true" → true). Every bad field is named,
 * prefixed with where it came from (`query.limit`, `body.role`).
 */
export function parseInput<S extends TSchema>(schema: S, input: unknown, location: 'body' | 'query'): Static<S> {
  const value = location === 'query' ? Value.Convert(schema, { ...(input as object) }) : input;
  if (location === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new ValidationFailed([{ field: 'body', message: 'must be a JSON object' }]);
  }
  const { value: parsed, errors } = checkAgainst<Static<S>>(schema, value, location);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return parsed;
}

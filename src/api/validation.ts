import type { TSchema, Static } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { NAME_PATTERN, QUOTA_BOUNDS, UpdateUserBody, UpdateUserSchema } from '../contracts/users.dto';
import { FieldProblem, ValidationFailed } from '../services/errors';
import { checkAgainst } from '../training/spec/errors';

// TypeBox rejects values of formats it does not know; register the ones the API uses.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v) && !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));

/**
 * Checks a request body or query against its schema, filling defaults. Query strings are
 * converted to the schema's types first, and only plain forms convert: an integer is decimal
 * digits ("20", not "2e1", "0x14" or "20.0"), a number decimal digits with an optional
 * fraction, a boolean `true` or `false`, each given once. Every bad field is named, prefixed
 * with where it came from (`query.limit`, `body.role`).
 */
export function parseInput<S extends TSchema>(schema: S, input: unknown, location: 'body' | 'query'): Static<S> {
  if (location === 'query') {
    const problems = plainQueryProblems(schema, input as Record<string, unknown>);
    if (problems.length > 0) throw new ValidationFailed(problems);
  }
  const value = location === 'query' ? Value.Convert(schema, { ...(input as object) }) : input;
  if (location === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new ValidationFailed([{ field: 'body', message: 'must be a JSON object' }]);
  }
  const { value: parsed, errors } = checkAgainst<Static<S>>(schema, value, location);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return parsed;
}

const PLAIN: Record<string, { pattern: RegExp; message: string }> = {
  integer: { pattern: /^-?\d+$/, message: 'must be a decimal integer (digits only)' },
  number: { pattern: /^-?\d+(\.\d+)?$/, message: 'must be a decimal number (digits, optionally a fraction)' },
  boolean: { pattern: /^(true|false)$/, message: 'must be true or false' },
};

/** Query parameters of a typed field that are not written plainly, or not once; integers that no float holds exactly. */
function plainQueryProblems(schema: TSchema, query: Record<string, unknown>): FieldProblem[] {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const problems: FieldProblem[] = [];
  for (const [name, raw] of Object.entries(query ?? {})) {
    const field = `query.${name}`;
    if (typeof raw !== 'string') {
      problems.push({ field, message: 'must be given once' });
      continue;
    }
    const plain = PLAIN[properties[name]?.type as string];
    if (!plain) continue;
    if (!plain.pattern.test(raw)) problems.push({ field, message: plain.message });
    else if (properties[name].type === 'integer' && !Number.isSafeInteger(Number(raw))) problems.push({ field, message: `must be between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}` });
  }
  return problems;
}

/** A TypeBox union error names no bound ("Expected union value"), so the nullable fields say theirs here. */
const NULLABLE_FIELD_MESSAGES: Record<string, string> = {
  'body.team': `must be null or 1–64 characters matching ${NAME_PATTERN}`,
  'body.maxRunningJobs': `must be null or an integer in [${QUOTA_BOUNDS.maxRunningJobs.minimum}, ${QUOTA_BOUNDS.maxRunningJobs.maximum}]`,
  'body.maxQueuedJobs': `must be null or an integer in [${QUOTA_BOUNDS.maxQueuedJobs.minimum}, ${QUOTA_BOUNDS.maxQueuedJobs.maximum}]`,
};

/** PATCH /v1/users/{id}: parseInput, with the nullable fields' messages naming their bounds. */
export function parseUpdateUser(body: unknown): UpdateUserBody {
  try {
    return parseInput(UpdateUserSchema, body, 'body');
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    throw new ValidationFailed(error.errors.map((e) => ({ field: e.field, message: NULLABLE_FIELD_MESSAGES[e.field] ?? e.message })));
  }
}

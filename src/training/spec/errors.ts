import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

/** One bad field: a dotted path (`rollout.groups`) and what is wrong, naming the bound. */
export interface FieldError {
  field: string;
  message: string;
}

/** Thrown for a job spec that cannot run; carries every bad field, not just the first. */
export class SpecValidationError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'SpecValidationError';
  }
}

/** Fills defaults and collects the errors of `value` against `schema`, paths under `prefix`. */
export function checkAgainst<T>(schema: TSchema, input: unknown, prefix: string): { value: T; errors: FieldError[] } {
  const value = Value.Default(schema, structuredClone(input ?? {})) as T;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    const field = [prefix, ...error.path.split('/').filter(Boolean)].filter(Boolean).join('.') || '(body)';
    if (seen.has(field)) continue; // one message per field: the first is the most specific
    seen.add(field);
    errors.push({ field, message: describe(error.type, error.schema, error.message) });
  }
  return { value, errors };
}

function describe(type: ValueErrorType, schema: TSchema, fallback: string): string {
  switch (type) {
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be <= ${schema.maximum}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be >= ${schema.minimum}`;
    case ValueErrorType.Integer:
      return 'must be an integer';
    case ValueErrorType.Number:
      return 'must be a number';
    case ValueErrorType.Boolean:
      return 'must be a boolean';
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.Array:
      return 'must be an array';
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${schema.maxItems} items`;
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${schema.maxProperties} entries`;
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a known field';
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    case ValueErrorType.StringMinLength:
      return `must be at least ${schema.minLength} characters`;
    case ValueErrorType.StringPattern:
      return `must match ${schema.pattern}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(schema.const)}`;
    case ValueErrorType.Union: {
      const choices = (schema.anyOf as TSchema[] | undefined)?.map((s) => s.const).filter((c) => c !== undefined);
      return choices?.length ? `must be one of ${choices.join(', ')}` : fallback;
    }
    default:
      return fallback.replace(/^Expected/, 'must be');
  }
}

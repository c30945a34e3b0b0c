import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { FieldProblem, ValidationFailed } from '../services/errors';

/** Deepest nesting of objects and arrays a request may carry (a job spec needs 6). */
export const MAX_INPUT_DEPTH = 32;

/** A lone half of a UTF-16 surrogate pair: not a character, and Postgres refuses to store it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Every body, query and path parameter, before any handler or schema sees it: strings (keys
 * included) must not carry NUL or lone surrogates (Postgres stores neither: they would be 500s),
 * and nesting must not pass MAX_INPUT_DEPTH (schema checks and hashing recurse over it). The
 * walk is iterative, so no input can overflow its stack. Each bad place is named
 * (`body.labels.team`, `query.label`, `path.id`) in a 400 problem.
 */
@Injectable()
export class InputGuardPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const location = metadata.type === 'param' ? 'path' : metadata.type;
    if (location !== 'body' && location !== 'query' && location !== 'path') return value;
    const problems = inspect(value, metadata.type === 'param' && metadata.data ? `path.${metadata.data}` : location);
    if (problems.length > 0) throw new ValidationFailed(problems);
    return value;
  }
}

/** The problems of `input` (at most 20), each named by its path under `root`. */
export function inspect(input: unknown, root: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: root, depth: 0 }];
  while (stack.length > 0 && problems.length < 20) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) problems.push({ field: path, message: problem });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      problems.push({ field: path, message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` });
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value);
    for (const [key, item] of entries) {
      const keyProblem = stringProblem(key);
      if (keyProblem) problems.push({ field: `${path}.${printable(key)}`, message: `has a name that ${keyProblem.replace(/^must not contain/, 'contains')}` });
      else stack.push({ value: item, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return problems;
}

function stringProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (LONE_SURROGATE.test(text)) return 'must not contain lone UTF-16 surrogates (\\ud800–\\udfff unpaired)';
  return null;
}

/** A key as it can be shown in a field name: NUL and lone surrogates escaped. */
function printable(key: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is exactly what is escaped here
  return key.replace(/[\u0000\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

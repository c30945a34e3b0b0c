import type { FieldError } from '../../spec/errors';
import { PROTOCOL_LIMITS } from './protocol';
import type { OpenEnvMapping } from './sessions';

/** Where an environment is served and in which dialect. */
export type EnvServerAddress = { url: string; protocol: 'starlab' } | { url: string; protocol: 'openenv'; mapping: OpenEnvMapping };

/** The ids that name a server by its address in a job spec run without the service (`npm run train`). */
export const ADDRESSED_ENVIRONMENTS = { http: 'starlab', openenv: 'openenv' } as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a server's address: `{url}` for the StarLab protocol, and for OpenEnv also the
 * observation's text field, the action's field and the action set. Every problem names its field
 * under `at` (e.g. `environment.config`).
 */
export function readServerAddress(protocol: 'starlab' | 'openenv', value: unknown, at: string): { address?: EnvServerAddress; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!isObject(value)) return { errors: [{ field: at, message: 'must be an object with the server\'s "url"' }] };
  const allowed = protocol === 'starlab' ? ['url'] : ['url', 'observationField', 'actionField', 'actions', 'vocabulary', 'maxTurns', 'description'];
  for (const key of Object.keys(value)) if (!allowed.includes(key)) errors.push({ field: `${at}.${key}`, message: `unknown field; allowed: ${allowed.join(', ')}` });
  const url = value.url;
  let parsed: URL | null = null;
  try {
    parsed = typeof url === 'string' ? new URL(url) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:', ...(protocol === 'openenv' ? ['ws:', 'wss:'] : [])].includes(parsed.protocol)) {
    errors.push({ field: `${at}.url`, message: `must be an absolute ${protocol === 'openenv' ? 'http(s):// or ws(s)://' : 'http:// or https://'} URL` });
  }
  if (protocol === 'starlab') return errors.length > 0 ? { errors } : { address: { protocol, url: url as string }, errors };
  for (const field of ['observationField', 'actionField'] as const) {
    const name = value[field];
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) errors.push({ field: `${at}.${field}`, message: 'must name a field (letters, digits, _; at most 64)' });
  }
  const actions = value.actions;
  if (!Array.isArray(actions) || actions.length === 0 || actions.length > PROTOCOL_LIMITS.actions || actions.some((a) => typeof a !== 'string' || a.length === 0 || /\s/.test(a))) {
    errors.push({ field: `${at}.actions`, message: `must be 1 to ${PROTOCOL_LIMITS.actions} action words without spaces` });
  }
  if (errors.length > 0) return { errors };
  const base = (url as string).replace(/^ws/, 'http').replace(/\/ws\/?$/, '');
  const mapping: OpenEnvMapping = {
    observationField: value.observationField as string,
    actionField: value.actionField as string,
    actions: actions as string[],
    ...(value.vocabulary !== undefined ? { vocabulary: value.vocabulary as string[] } : {}),
    ...(value.maxTurns !== undefined ? { maxTurns: value.maxTurns as number } : {}),
    ...(value.description !== undefined ? { description: value.description as string } : {}),
  };
  return { address: { protocol, url: base, mapping }, errors };
}

/**
 * The misbehaviours the test environment server (starlab-protocol-server.ts) can show, so that
 * the remote-environment client's failure handling is tested against a real process over real
 * sockets. A fault applies to the requests named in `on`, starts after `after` of them were served
 * well, and lasts for `count` of them (then the server is healthy again) or for good.
 */
import { REMOTE_BOUNDS } from '../../../src/training/envs/remote-bounds';

export const FAULT_KINDS = [
  'none',
  /** 503 with Retry-After: 0 (a server restarting or overloaded). */
  'unavailable',
  /** The request is read and never answered; the connection stays open. */
  'hang',
  /** 200 with a body that is not JSON. */
  'garbage',
  /** 200 with JSON of the right fields and the wrong types. */
  'wrong-types',
  /** An answer without its `observation`. */
  'missing',
  /** An answer's `actions` (or the expert's plan) holds an action outside the manifest's set. */
  'foreign-action',
  /** An observation one character over REMOTE_BOUNDS.observationChars. */
  'oversize-observation',
  /** `actions` of 5000 entries, far over REMOTE_BOUNDS.actions. */
  'many-actions',
  /** The process exits abruptly, sockets and all, instead of answering. */
  'die',
  /** The manifest changes (a vocabulary word more): a server redeployed with another game. */
  'drift',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export const REQUEST_KINDS = ['manifest', 'reset', 'step', 'expert', 'fork', 'close'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface FaultOptions {
  kind: FaultKind;
  /** The requests it applies to (default: reset and step, so registration still works; drift: the manifest). */
  on: readonly RequestKind[];
  /** Matching requests answered well before the fault starts (`die` after N steps: after = N). */
  after: number;
  /** Faulty answers before the server is healthy again; Infinity: for good. */
  count: number;
}

export const NO_FAULT: FaultOptions = { kind: 'none', on: [], after: 0, count: Infinity };

/**
 * The one-word modes of `POST /__mode {"mode"}` as faults, each at once and for good: '503', 'hang'
 * and 'garbage' on every request, 'missing', 'foreign' and 'oversize' on steps, 'thousands' on the
 * manifest, 'ok' none.
 */
export const MODES: Readonly<Record<string, Pick<FaultOptions, 'kind' | 'on'>>> = {
  ok: { kind: 'none', on: [] },
  '503': { kind: 'unavailable', on: REQUEST_KINDS },
  hang: { kind: 'hang', on: REQUEST_KINDS },
  garbage: { kind: 'garbage', on: REQUEST_KINDS },
  missing: { kind: 'missing', on: ['step'] },
  foreign: { kind: 'foreign-action', on: ['step'] },
  oversize: { kind: 'oversize-observation', on: ['step'] },
  thousands: { kind: 'many-actions', on: ['manifest'] },
};

/** Defaults filled in: `on` from the kind, `after` 0, `count` for good. Throws on an unknown kind or request. */
export function faultOptions(given: { kind?: string; on?: readonly string[] | string; after?: number; count?: number }): FaultOptions {
  const kind = (given.kind ?? 'none') as FaultKind;
  if (!FAULT_KINDS.includes(kind)) throw new Error(`unknown fault '${kind}'; known: ${FAULT_KINDS.join(', ')}`);
  const on = typeof given.on === 'string' ? given.on.split(',').filter(Boolean) : given.on;
  const requests = (on && on.length > 0 ? on : kind === 'drift' ? ['manifest'] : ['reset', 'step']) as RequestKind[];
  for (const request of requests) if (!REQUEST_KINDS.includes(request)) throw new Error(`unknown request '${request}'; known: ${REQUEST_KINDS.join(', ')}`);
  const after = given.after ?? 0;
  const count = given.count ?? Infinity;
  if (!(Number.isInteger(after) && after >= 0)) throw new Error(`fault 'after' must be an integer ≥ 0, got ${after}`);
  if (!(count === Infinity || (Number.isInteger(count) && count >= 1))) throw new Error(`fault 'count' must be an integer ≥ 1, got ${count}`);
  return { kind, on: requests, after, count };
}

/** Counts the matching requests and says, for each, whether the fault strikes it. */
export class FaultSchedule {
  private seen = 0;
  private struck = 0;

  constructor(readonly options: FaultOptions) {}

  /** Whether this request of `kind` gets the fault (and counts it). */
  strikes(kind: RequestKind): boolean {
    const { options } = this;
    if (options.kind === 'none' || !options.on.includes(kind)) return false;
    this.seen++;
    if (this.seen <= options.after || this.struck >= options.count) return false;
    this.struck++;
    return true;
  }

  /** Faulty answers given so far. */
  get hits(): number {
    return this.struck;
  }
}

/** A good answer turned into the faulty one of `kind` (the body kinds; unavailable, hang and die act on the connection). */
export function corrupt(kind: FaultKind, request: RequestKind, answer: Record<string, unknown>): Record<string, unknown> {
  switch (kind) {
    case 'wrong-types':
      return Object.fromEntries(Object.entries(answer).map(([field, value]) => [field, wrongType(value)]));
    case 'missing':
      return Object.fromEntries(Object.entries(answer).filter(([field]) => field !== 'observation'));
    case 'foreign-action':
      if (request === 'expert') return { actions: ['Jump'] };
      return { ...answer, actions: [...((answer.actions as string[] | undefined) ?? ['Up']), 'Jump'] };
    case 'oversize-observation':
      return 'observation' in answer ? { ...answer, observation: '_'.repeat(REMOTE_BOUNDS.observationChars + 1) } : answer;
    case 'many-actions':
      return { ...answer, actions: Array.from({ length: 5000 }, (_, i) => `a${i}`) };
    case 'drift':
      return request === 'manifest' ? { ...answer, vocabulary: [...((answer.vocabulary as string[] | undefined) ?? []), 'drifted'] } : answer;
    default:
      return answer;
  }
}

/** A value of another JSON type than `value`'s: strings become numbers, numbers strings, booleans strings, arrays a string, objects a number. */
function wrongType(value: unknown): unknown {
  if (typeof value === 'string') return 42;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.join(',');
  return 7;
}

/**
 * The StarLab environment protocol's answers, checked (docs/environments.md): a server is
 * untrusted input, so every answer is validated against its shape and bounds before the trainer
 * sees it, and a bad one becomes an `EnvServerError` that names the environment, the request and
 * what is wrong, never a crash.
 */
import { DIGIT_TOKENS, FORMAT_TOKENS, HISTORY_TOKENS, REWARD_TOKENS, SPECIAL_TOKENS } from '../../policy/tokenizer';
import { REMOTE_BOUNDS } from '../remote-bounds';

/**
 * Bounds on what a server may send, under the client's names: an answer beyond them is refused,
 * not truncated. The figures are the protocol's own (REMOTE_BOUNDS, which its OpenAPI file states).
 */
export const PROTOCOL_LIMITS = {
  actions: REMOTE_BOUNDS.actions,
  actionLength: REMOTE_BOUNDS.actionChars,
  vocabulary: REMOTE_BOUNDS.vocabularyWords,
  wordLength: REMOTE_BOUNDS.wordChars,
  observation: REMOTE_BOUNDS.observationChars,
  session: REMOTE_BOUNDS.sessionChars,
  description: REMOTE_BOUNDS.descriptionChars,
  reward: REMOTE_BOUNDS.reward,
  body: REMOTE_BOUNDS.bodyBytes,
} as const;

/** What `GET URL/manifest` describes. */
export interface Manifest {
  actions: string[];
  maxTurns?: number;
  vocabulary: string[];
  expert: boolean;
  description: string;
}

export interface ResetAnswer {
  session: string;
  observation: string;
  actions?: string[];
}

export interface StepAnswer {
  observation: string;
  reward: number;
  done: boolean;
  success?: boolean;
  actions?: string[];
}

/** Why a request to an environment server did not give a usable answer. */
export type EnvServerFailure = 'unavailable' | 'malformed';

/** A request to an environment server that failed: the environment, the request and the reason are in the message. */
export class EnvServerError extends Error {
  constructor(
    readonly environment: string,
    readonly request: string,
    readonly failure: EnvServerFailure,
    readonly detail: string,
    /** The HTTP status of the answer, where one came. */
    readonly status?: number,
  ) {
    super(`environment '${environment}': ${request} ${failure === 'unavailable' ? 'failed' : 'was answered badly'}: ${detail}`);
    this.name = 'EnvServerError';
  }
}

type Json = Record<string, unknown>;

/** Checks one answer; `bad(detail)` throws the request's malformed-answer error. */
class AnswerReader {
  constructor(
    private readonly answer: unknown,
    private readonly bad: (detail: string) => never,
  ) {
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) bad(`expected a JSON object, got ${describe(answer)}`);
  }

  /** The answer's fields, once the constructor has found it an object. */
  get json(): Json {
    return this.answer as Json;
  }

  private get fields(): Json {
    return this.json;
  }

  string(field: string, max: number, optional = false): string | undefined {
    const value = this.fields[field];
    if (value === undefined && optional) return undefined;
    if (typeof value !== 'string') return this.bad(`"${field}" must be a string, got ${describe(value)}`);
    if (value.length > max) return this.bad(`"${field}" is ${value.length} characters long; the bound is ${max}`);
    return value;
  }

  boolean(field: string, optional = false): boolean | undefined {
    const value = this.fields[field];
    if (value === undefined && optional) return undefined;
    if (typeof value !== 'boolean') return this.bad(`"${field}" must be true or false, got ${describe(value)}`);
    return value;
  }

  number(field: string, bound: number): number {
    const value = this.fields[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.bad(`"${field}" must be a finite number, got ${describe(value)}`);
    if (Math.abs(value) > bound) return this.bad(`"${field}" is ${value}; the bound is ±${bound}`);
    return value;
  }

  integer(field: string, min: number, max: number): number | undefined {
    const value = this.fields[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) return this.bad(`"${field}" must be an integer from ${min} to ${max}, got ${describe(value)}`);
    return value;
  }

  words(field: string, maxCount: number, maxLength: number, optional: boolean): string[] | undefined {
    const value = this.fields[field];
    if (value === undefined && optional) return undefined;
    if (!Array.isArray(value)) return this.bad(`"${field}" must be an array of strings, got ${describe(value)}`);
    if (value.length > maxCount) return this.bad(`"${field}" has ${value.length} entries; the bound is ${maxCount}`);
    for (const [i, word] of value.entries()) {
      if (typeof word !== 'string' || word.length === 0 || word.length > maxLength || /\s/.test(word)) {
        this.bad(`"${field}"[${i}] must be a word of 1 to ${maxLength} characters without spaces, got ${describe(word)}`);
      }
    }
    return value as string[];
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

const malformed = (environment: string, request: string) => (detail: string): never => {
  throw new EnvServerError(environment, request, 'malformed', detail);
};

/** Most turns a manifest may ask for (the job spec's bound on rollout.maxTurns). */
export const MAX_MANIFEST_TURNS = 10;

/**
 * Words an action may not be: tokens the policy never emits (specials, the history's reward digits
 * and markers) or that the response format gives a meaning (its tags, the `||` separator). A
 * manifest naming one is refused, rather than trained on an action nobody can choose.
 */
const RESERVED_WORDS: ReadonlySet<string> = new Set([...Object.values(SPECIAL_TOKENS), ...FORMAT_TOKENS, ...Object.values(REWARD_TOKENS), ...Object.values(HISTORY_TOKENS), ...DIGIT_TOKENS]);

export function readManifest(environment: string, answer: unknown): Manifest {
  const read = new AnswerReader(answer, malformed(environment, 'GET /manifest'));
  const actions = read.words('actions', PROTOCOL_LIMITS.actions, PROTOCOL_LIMITS.actionLength, false)!;
  if (actions.length === 0) malformed(environment, 'GET /manifest')('"actions" is empty: an environment needs at least one action');
  const lower = actions.map((a) => a.toLowerCase());
  const twice = lower.find((a, i) => lower.indexOf(a) !== i);
  if (twice) malformed(environment, 'GET /manifest')(`"actions" names "${twice}" twice (actions match regardless of case)`);
  const reserved = actions.find((a) => RESERVED_WORDS.has(a.toLowerCase()));
  if (reserved !== undefined) {
    malformed(environment, 'GET /manifest')(
      `"actions" names "${reserved}", one of the tokens StarLab keeps for itself (the digits, "-" and "." it writes rewards with, its markers and the response format's tags), so the policy could never say it: name the action in words ("three") or with a prefix ("a3")`,
    );
  }
  const maxTurns = read.integer('maxTurns', 1, MAX_MANIFEST_TURNS);
  return {
    actions,
    ...(maxTurns === undefined ? {} : { maxTurns }),
    vocabulary: read.words('vocabulary', PROTOCOL_LIMITS.vocabulary, PROTOCOL_LIMITS.wordLength, true) ?? [],
    expert: read.boolean('expert', true) ?? false,
    description: read.string('description', PROTOCOL_LIMITS.description, true) ?? '',
  };
}

/** An answer's narrowed action set: a subset of the manifest's, by the same case-insensitive match. */
function narrowed(read: AnswerReader, manifest: Manifest, bad: (detail: string) => never): string[] | undefined {
  const actions = read.words('actions', PROTOCOL_LIMITS.actions, PROTOCOL_LIMITS.actionLength, true);
  if (actions === undefined) return undefined;
  return actions.map((action) => canonicalAction(manifest, action) ?? bad(`"actions" names "${action}", which is not in the manifest's action set`));
}

/** The manifest's spelling of `action`, matched regardless of case; undefined when it is not in the set. */
export function canonicalAction(manifest: { actions: readonly string[] }, action: string): string | undefined {
  const lower = action.toLowerCase();
  return manifest.actions.find((a) => a.toLowerCase() === lower);
}

export function readReset(environment: string, manifest: Manifest, answer: unknown, seed: number): ResetAnswer {
  const bad = malformed(environment, `POST /reset (seed ${seed})`);
  const read = new AnswerReader(answer, bad);
  const session = read.string('session', PROTOCOL_LIMITS.session)!;
  if (session.length === 0) bad('"session" is empty');
  const actions = narrowed(read, manifest, bad);
  return { session, observation: read.string('observation', PROTOCOL_LIMITS.observation)!, ...(actions ? { actions } : {}) };
}

export function readStep(environment: string, manifest: Manifest, answer: unknown, action: string): StepAnswer {
  const bad = malformed(environment, `POST /step (action ${action})`);
  const read = new AnswerReader(answer, bad);
  const success = read.boolean('success', true);
  const actions = narrowed(read, manifest, bad);
  return {
    observation: read.string('observation', PROTOCOL_LIMITS.observation)!,
    reward: read.number('reward', PROTOCOL_LIMITS.reward),
    done: read.boolean('done')!,
    ...(success === undefined ? {} : { success }),
    ...(actions ? { actions } : {}),
  };
}

/**
 * An OpenEnv observation message (`{"type": "observation", "data": {"observation": {…}, "reward",
 * "done"}}`), checked with the bounds and words of the StarLab protocol's step answer; the text is
 * the registration's `observationField`, and a null reward (OpenEnv's on reset) counts as 0.
 */
export function readOpenEnvObservation(environment: string, request: string, message: unknown, observationField: string): StepAnswer {
  const bad = malformed(environment, request);
  const { type, data } = new AnswerReader(message, bad).json;
  if (type === 'error') return bad(`the server says: ${String((data as Json | undefined)?.message ?? 'error').slice(0, 200)}`);
  if (type !== 'observation') return bad(`expected {"type": "observation", "data": {…}}, got type ${JSON.stringify(type)}`);
  const read = new AnswerReader(data, bad);
  return {
    observation: new AnswerReader(read.json.observation, bad).string(observationField, PROTOCOL_LIMITS.observation)!,
    reward: read.json.reward == null ? 0 : read.number('reward', PROTOCOL_LIMITS.reward),
    done: read.boolean('done')!,
  };
}

export function readExpert(environment: string, manifest: Manifest, answer: unknown): string[] {
  const bad = malformed(environment, 'POST /expert');
  const read = new AnswerReader(answer, bad);
  const actions = read.words('actions', PROTOCOL_LIMITS.actions, PROTOCOL_LIMITS.actionLength, false)!;
  return actions.map((action) => canonicalAction(manifest, action) ?? bad(`"actions" names "${action}", which is not in the manifest's action set`));
}

export function readFork(environment: string, answer: unknown): string {
  const bad = malformed(environment, 'POST /fork');
  const session = new AnswerReader(answer, bad).string('session', PROTOCOL_LIMITS.session)!;
  if (session.length === 0) bad('"session" is empty');
  return session;
}

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Arrays, loadWeights, putWeights } from './checkpoint';
import { decodeCheckpoint, encodeCheckpoint } from './policy/checkpoint-format';
import type { TransformerLM } from './policy/transformer';
import type { JobSpec } from './spec/validate';

/**
 * Warm-ups shared between jobs. What a warm-up leaves (the actor's weights) depends on the
 * model, the environment, the response format and history, the warm-up's own settings, the seed
 * and the backend's arithmetic, and on nothing the RL phase reads: not the preset, its learning
 * rate or schedule, the rollout batch or its temperature, the evaluation or the budget. Jobs that
 * differ only there (a preset comparison, a learning-rate sweep, a collapse suite) can train the
 * warm-up once. The store holds the bytes; where they live is the caller's business.
 */
export interface WarmupStore {
  get(key: string): Uint8Array | undefined;
  put(key: string, bytes: Uint8Array): void;
}

/** What a stored warm-up says of itself besides the weights. */
export interface WarmupRecord {
  /** Mean supervised loss of the last steps, as the warm-up reported it. */
  loss: number;
  /** How long the warm-up took when it was trained. */
  ms: number;
}

/** Settings of the rollout the warm-up's scripted episodes never read: they only steer sampling. */
const SAMPLING_ONLY = ['groups', 'groupSize', 'temperature'] as const;

/**
 * The key of a job's warm-up: a digest of every input that changes it. `tokens` is the job's
 * vocabulary (it sizes the embeddings), `backend` the tfjs backend whose float sums it ran on.
 */
export function warmupKey(spec: JobSpec, tokens: readonly string[], backend: string): string {
  const rollout: Record<string, unknown> = { ...spec.rollout };
  for (const field of SAMPLING_ONLY) delete rollout[field];
  const inputs = {
    specVersion: spec.specVersion,
    environment: spec.environment,
    model: spec.model,
    rollout,
    warmup: spec.training.warmup,
    seed: spec.training.seed,
    tokens,
    backend,
  };
  return createHash('sha256').update(stableJson(inputs)).digest('hex');
}

export function encodeWarmup(actor: TransformerLM, record: WarmupRecord): Uint8Array {
  const arrays: Arrays = new Map();
  putWeights(arrays, 'actor', actor);
  return encodeCheckpoint({ meta: record, arrays });
}

/**
 * Loads a stored warm-up's weights into `actor` (built for the same spec) and returns its record.
 * Every array is checked before any is assigned, so an entry that does not fit (damaged, or from
 * another model) throws and leaves the actor as it was.
 */
export function decodeWarmupInto(bytes: Uint8Array, actor: TransformerLM): WarmupRecord {
  const { meta, arrays } = decodeCheckpoint<WarmupRecord>(bytes);
  for (const [name, variable] of actor.namedVariables()) {
    const saved = arrays.get(`actor/${name}`);
    if (!saved || saved.shape.join(',') !== variable.shape.join(',') || saved.data.length !== variable.size) throw new Error(`stored warm-up does not fit actor/${name}`);
  }
  if (typeof meta.loss !== 'number' || typeof meta.ms !== 'number') throw new Error('stored warm-up has no record');
  loadWeights(arrays, 'actor', actor);
  return meta;
}

export interface DirectoryStoreOptions {
  /** Entries kept; past it the least recently used go first. */
  maxEntries: number;
  /** Told when the folder cannot be read or written: the job then trains its warm-up itself. */
  log?: (message: string) => void;
  /** The source whose digest salts every name (default: this library's own folder, .ts or built .js). */
  sourceRoot?: string;
}

/**
 * A store in a local folder: one file per warm-up, named by a digest of its key and of the
 * training library's source, so that a change to the code that trains a warm-up makes the old
 * entries unreachable instead of silently reused. Writes go to a temporary file renamed into
 * place, so concurrent jobs never read half an entry. A folder that cannot be read or written
 * only costs the time the store would have saved: nothing here throws.
 */
export function directoryWarmupStore(dir: string, options: DirectoryStoreOptions): WarmupStore {
  const log = options.log ?? (() => undefined);
  const code = sourceDigest(options.sourceRoot ?? __dirname);
  const file = (key: string) => join(dir, `${createHash('sha256').update(`${code}:${key}`).digest('hex').slice(0, 32)}.warmup`);
  return {
    get: (key) => {
      try {
        const bytes = new Uint8Array(readFileSync(file(key)));
        const now = new Date();
        utimesSync(file(key), now, now);
        return bytes;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log(`warm-up store: cannot read ${dir}: ${(error as Error).message}`);
        return undefined;
      }
    },
    put: (key, bytes) => {
      try {
        mkdirSync(dir, { recursive: true });
        const temporary = `${file(key)}.${process.pid}.tmp`;
        writeFileSync(temporary, bytes);
        renameSync(temporary, file(key));
        evictBeyond(dir, options.maxEntries);
      } catch (error) {
        log(`warm-up store: cannot write ${dir}: ${(error as Error).message}`);
      }
    },
  };
}

/**
 * Deletes the least recently used entries past `maxEntries` (a hit touches its file). Another
 * process may evict or replace the same files meanwhile: a file already gone is skipped.
 */
function evictBeyond(dir: string, maxEntries: number): void {
  const usedAt = (path: string) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return null;
    }
  };
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.warmup'))
    .map((name) => ({ path: join(dir, name), used: usedAt(join(dir, name)) }))
    .filter((entry): entry is { path: string; used: number } => entry.used !== null)
    .sort((a, b) => b.used - a.used);
  for (const old of entries.slice(maxEntries)) rmSync(old.path, { force: true });
}

/** A digest of the library's source files (tests and declarations left out), read once per store. */
function sourceDigest(root: string): string {
  const hash = createHash('sha256');
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(entry.name) && !/\.(spec|d)\.ts$/.test(entry.name)) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(root);
  return hash.digest('hex');
}

/** JSON with object keys sorted at every depth, so equal settings give equal text. */
function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, sort(x)])) : v;
  return JSON.stringify(sort(value));
}

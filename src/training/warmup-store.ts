import { createHash } from 'node:crypto';
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
 * warm-up once. The store holds the bytes; where they live is the caller's business (a worker's
 * and the benches' is a local folder: WarmupFileStore in src/repositories).
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
    warmup: warmupInputs(spec),
    seed: spec.training.seed,
    tokens,
    backend,
  };
  return createHash('sha256').update(stableJson(inputs)).digest('hex');
}

/** The warm-up section as it keys a warm-up: without the curriculum while it is off, so warm-ups stored before it existed keep their keys. */
function warmupInputs(spec: JobSpec): Record<string, unknown> {
  const { curriculumShare, curriculumConfig, ...rest } = spec.training.warmup;
  return curriculumShare === 0 ? rest : { ...rest, curriculumShare, curriculumConfig };
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

/** JSON with object keys sorted at every depth, so equal settings give equal text. */
function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, sort(x)])) : v;
  return JSON.stringify(sort(value));
}

import { mean } from './algorithms/stats';
import type { BackendName } from './backend';
import { curriculumEnvConfig } from './curriculum';
import type { EnvDefinition } from './envs/types';
import { Adam } from './policy/adam';
import { learningRateScale } from './policy/lr-schedule';
import type { Tokenizer } from './policy/tokenizer';
import type { Rng } from './random';
import type { ContextBuilder } from './rollout/context';
import type { RolloutSettings } from './rollout/engine';
import { warmupSeed } from './seeds';
import { METRIC, Metrics } from './signals/step-metrics';
import type { JobSpec } from './spec/validate';
import type { Learner } from './update';
import { scriptedExamples, supervisedStep } from './warmup';
import { WARMUP_REPORT_EVERY, warmupReport } from './warmup-report';
import { WarmupRecord, WarmupStore, decodeWarmupInto, encodeWarmup, warmupKey } from './warmup-store';

const WARMUP_MAX_GRAD_NORM = 1;

/** What the warm-up reads of a trainer. */
export interface WarmupInputs {
  spec: JobSpec;
  definition: EnvDefinition;
  settings: RolloutSettings;
  tokenizer: Tokenizer;
  contexts: ContextBuilder;
  learner: Learner;
  backend: BackendName;
}

/** Asked between warm-up steps; true abandons the warm-up (a pause or preempt of the job). */
export type StopCheck = () => boolean | Promise<boolean>;

/**
 * Step 0 of a job: the supervised warm-up of the actor (docs/training.md, "Policy"), trained on
 * `rng`, or loaded from `store` when a job with the same warm-up inputs already trained it; then
 * the critic and the reference start from it. Returns the step's warm-up metrics, or null when
 * `shouldStop` said so between two of its steps: the warm-up is abandoned (the actor is half
 * trained), and since it depends only on the spec and its own RNG stream, the next run trains it
 * again from the start to the same weights.
 */
export async function warmUp(inputs: WarmupInputs, rng: Rng, store: WarmupStore | undefined, log: (message: string) => void = () => undefined, shouldStop: StopCheck = () => false): Promise<Metrics | null> {
  const { spec, learner } = inputs;
  if (spec.training.warmup.kind === 'none' || spec.training.warmup.steps === 0) return {};
  // A served environment's id and manifest say nothing of its dynamics: its warm-up is never shared.
  const key = store && !inputs.definition.served ? warmupKey(spec, inputs.tokenizer.tokens, inputs.backend) : null;
  const started = Date.now();
  let record = key ? storedWarmup(inputs, store!, key, log) : null;
  const reused = record !== null;
  if (!record) {
    record = await trainWarmup(inputs, rng, log, shouldStop);
    if (!record) return null;
    if (key) keepWarmup(inputs, store!, key, record, log);
  }
  // The critic starts from the warmed-up trunk (RAGEN initialises it from the same model);
  // the reference is the warm-up policy the KL term holds the actor near.
  learner.critic?.copyFrom(learner.actor);
  learner.reference?.copyFrom(learner.actor);
  return { [METRIC.warmupLoss]: record.loss, 'warmup/ms': Date.now() - started, ...(key ? { 'warmup/reused': reused ? 1 : 0 } : {}) };
}

/** The supervised warm-up itself: its own Adam and RNG stream, on the actor alone; null when stopped between steps. */
async function trainWarmup(inputs: WarmupInputs, rng: Rng, log: (message: string) => void, shouldStop: StopCheck): Promise<WarmupRecord | null> {
  const { spec, learner } = inputs;
  const { warmup, seed } = spec.training;
  const optimizer = new Adam(learner.actor.namedVariables(), warmup.learningRate);
  let episode = 0;
  const seeds = () => warmupSeed(seed, episode++);
  const losses: number[] = [];
  const started = Date.now();
  for (let i = 0; i < warmup.steps; i++) {
    if (await shouldStop()) {
      optimizer.dispose();
      log(`warm-up ${warmup.kind} stopped after ${i}/${warmup.steps} steps; it starts over when the job resumes`);
      return null;
    }
    optimizer.learningRate = warmup.learningRate * learningRateScale(warmup.lrSchedule, i + 1, warmup.steps);
    const rows = await scriptedExamples(warmup.kind as 'format' | 'demonstrations', inputs.definition, warmupEnvConfig(spec, i), inputs.settings, inputs.tokenizer, inputs.contexts, rng, seeds, warmup.batchSize);
    if (rows.length === 0) throw new Error(`warm-up produced no examples for ${inputs.definition.id}`);
    losses.push(supervisedStep(learner.actor, optimizer, rows, WARMUP_MAX_GRAD_NORM, warmup.worldModelCoef));
    const done = i + 1;
    if (done % WARMUP_REPORT_EVERY === 0 || done === warmup.steps) {
      log(warmupReport({ kind: warmup.kind, done, steps: warmup.steps, loss: mean(losses.slice(Math.floor(i / WARMUP_REPORT_EVERY) * WARMUP_REPORT_EVERY)) }));
    }
  }
  optimizer.dispose();
  return { loss: mean(losses.slice(-10)), ms: Date.now() - started };
}

/** The environment config of warm-up step `i` (from 0): the curriculum's over the job's for its first share of the steps (rounded), then the job's. */
export function warmupEnvConfig(spec: JobSpec, i: number): Record<string, unknown> {
  return curriculumEnvConfig(spec.environment.config, spec.training.warmup, i, spec.training.warmup.steps);
}

/** The store's warm-up for `key` loaded into the actor, or null (none, or one that does not load: it is then trained). */
function storedWarmup(inputs: WarmupInputs, store: WarmupStore, key: string, log: (message: string) => void): WarmupRecord | null {
  const bytes = store.get(key);
  if (!bytes) return null;
  try {
    const record = decodeWarmupInto(bytes, inputs.learner.actor);
    log(`warm-up ${inputs.spec.training.warmup.kind}: reused a stored one (loss ${record.loss.toFixed(4)})`);
    return record;
  } catch (error) {
    log(`warm-up: the stored one does not load (${(error as Error).message}); training it`);
    return null;
  }
}

/** A store that fails costs the next job its reuse, never this job its run. */
function keepWarmup(inputs: WarmupInputs, store: WarmupStore, key: string, record: WarmupRecord, log: (message: string) => void): void {
  try {
    store.put(key, encodeWarmup(inputs.learner.actor, record));
  } catch (error) {
    log(`warm-up: not stored (${(error as Error).message})`);
  }
}

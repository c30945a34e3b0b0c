import * as tf from '@tensorflow/tfjs';
import { Adam, AdamState } from './policy/adam';
import { decodeCheckpoint, encodeCheckpoint } from './policy/checkpoint-format';
import { gridLayoutFor } from './policy/grid-positions';
import { Tokenizer } from './policy/tokenizer';
import { TransformerConfig, TransformerLM } from './policy/transformer';
import type { RngState } from './random';
import type { SelfImitationState } from './self-imitation';
import type { MonitorState } from './signals/collapse';
import type { Learner } from './update';

/** Everything besides tensors that a resumed run needs to continue bit-for-bit. */
export interface TrainerState {
  /** Last completed step (0 = warm-up done). */
  step: number;
  nextSeedIndex: number;
  samplingRng: RngState;
  updateRng: RngState;
  /** Collapse detectors' memory, so warnings after a resume match the uninterrupted run. */
  monitor: MonitorState;
  /** The self-imitation buffer, when the job uses one. */
  selfImitation?: SelfImitationState;
  /** Digest of the manifest of the served environment the job trains on (envs/remote/remote-env.ts). */
  environmentDigest?: string;
}

/** A checkpoint of a served environment resumed against a server that now serves another manifest. */
export class ManifestChangedError extends Error {
  constructor(
    readonly environment: string,
    readonly stored: string,
    readonly served: string,
  ) {
    super(
      `environment '${environment}' now serves another manifest (digest ${served.slice(0, 12)}…) than the one this job's checkpoint was trained on ` +
        `(${stored.slice(0, 12)}…): its tokens would not mean what they meant; train a new job on it instead`,
    );
    this.name = 'ManifestChangedError';
  }
}

interface CheckpointMeta {
  format: 1;
  state: TrainerState;
  modelConfig: TransformerConfig;
  tokens: string[];
  networks: string[];
  optimizerSteps: Record<string, number>;
}

export type Arrays = Map<string, { shape: number[]; data: Float32Array }>;

/** Adds a network's weights to `arrays`, each under `prefix/name`. */
export function putWeights(arrays: Arrays, prefix: string, model: TransformerLM): void {
  for (const [name, variable] of model.namedVariables()) {
    arrays.set(`${prefix}/${name}`, { shape: variable.shape, data: variable.dataSync() as Float32Array });
  }
}

/** Serialises weights of every network, both Adam states, RNG states and the step. */
export function saveCheckpoint(learner: Learner, tokenizer: Tokenizer, state: TrainerState): Uint8Array {
  const arrays: Arrays = new Map();
  const networks: string[] = [];
  const optimizerSteps: Record<string, number> = {};
  const addModel = (prefix: string, model: TransformerLM | null) => {
    if (!model) return;
    networks.push(prefix);
    putWeights(arrays, prefix, model);
  };
  const addOptimizer = (prefix: string, model: TransformerLM | null, optimizer: Adam | null) => {
    if (!model || !optimizer) return;
    const adam = optimizer.getState();
    optimizerSteps[prefix] = adam.step;
    for (const [name, variable] of model.namedVariables()) {
      arrays.set(`${prefix}/m/${name}`, { shape: variable.shape, data: adam.moments[name].m });
      arrays.set(`${prefix}/v/${name}`, { shape: variable.shape, data: adam.moments[name].v });
    }
  };
  addModel('actor', learner.actor);
  addModel('critic', learner.critic);
  addModel('reference', learner.reference);
  addOptimizer('actor_adam', learner.actor, learner.actorOptimizer);
  addOptimizer('critic_adam', learner.critic, learner.criticOptimizer);
  addOptimizer('imitation_adam', learner.actor, learner.imitationOptimizer ?? null);
  const meta: CheckpointMeta = {
    format: 1,
    state,
    modelConfig: learner.actor.config,
    tokens: [...tokenizer.tokens],
    networks,
    optimizerSteps,
  };
  return encodeCheckpoint({ meta, arrays });
}

/** The trainer state a checkpoint holds, without loading its weights. */
export function peekCheckpointState(bytes: Uint8Array): TrainerState {
  return decodeCheckpoint<CheckpointMeta>(bytes).meta.state;
}

/** Loads a checkpoint into a learner built for the same spec; returns the trainer state. */
export function restoreCheckpoint(bytes: Uint8Array, learner: Learner, tokenizer: Tokenizer): TrainerState {
  const { meta, arrays } = decodeCheckpoint<CheckpointMeta>(bytes);
  if (meta.format !== 1) throw new Error(`unsupported checkpoint format ${meta.format}`);
  if (meta.tokens.join('\u0000') !== tokenizer.tokens.join('\u0000')) throw new Error('checkpoint vocabulary differs from this job');
  loadWeights(arrays, 'actor', learner.actor);
  if (learner.critic) loadWeights(arrays, 'critic', learner.critic);
  if (learner.reference) loadWeights(arrays, 'reference', learner.reference);
  const loadAdam = (prefix: string, model: TransformerLM | null, optimizer: Adam | null) => {
    if (!model || !optimizer || meta.optimizerSteps[prefix] === undefined) return;
    const moments: AdamState['moments'] = {};
    for (const [name] of model.namedVariables()) {
      moments[name] = { m: arrays.get(`${prefix}/m/${name}`)!.data, v: arrays.get(`${prefix}/v/${name}`)!.data };
    }
    optimizer.setState({ step: meta.optimizerSteps[prefix], moments });
  };
  loadAdam('actor_adam', learner.actor, learner.actorOptimizer);
  loadAdam('critic_adam', learner.critic, learner.criticOptimizer);
  loadAdam('imitation_adam', learner.actor, learner.imitationOptimizer ?? null);
  return meta.state;
}

/** The trained policy of a checkpoint, on its own (evaluation, inspection, fork). */
export function loadPolicyFromCheckpoint(bytes: Uint8Array): { model: TransformerLM; tokenizer: Tokenizer; step: number } {
  const { meta, arrays } = decodeCheckpoint<CheckpointMeta>(bytes);
  const tokenizer = new Tokenizer(meta.tokens, []);
  const model = new TransformerLM(meta.modelConfig, 0, tokenizer.forbiddenIds, gridLayoutFor(meta.modelConfig, tokenizer.tokens));
  loadWeights(arrays, 'actor', model);
  return { model, tokenizer, step: meta.state.step };
}

/** Assigns the weights stored under `prefix/` to a network of the same shapes. */
export function loadWeights(arrays: Arrays, prefix: string, model: TransformerLM): void {
  for (const [name, variable] of model.namedVariables()) {
    const saved = arrays.get(`${prefix}/${name}`);
    if (!saved) throw new Error(`checkpoint has no ${prefix}/${name}`);
    if (saved.shape.join(',') !== variable.shape.join(',')) throw new Error(`shape of ${prefix}/${name} differs`);
    tf.tidy(() => variable.assign(tf.tensor(saved.data, variable.shape)));
  }
}

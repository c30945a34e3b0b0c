/**
 * The TypeScript side of bench/reference.ts: the project's TransformerLM and AdamW running the
 * workload bench/reference.py runs in PyTorch: a PPO update (forward, clipped loss, backward,
 * AdamW; the critic's value loss and its own AdamW when the preset has one) and batched
 * generation with the KV cache (prefill, then one decode step per new token).
 */
import * as tf from '@tensorflow/tfjs';
import { ACTIVATION_BUDGET_FLOATS } from '../src/training/accumulate';
import { tokenLogProbs } from '../src/training/algorithms/tokenDistributions';
import { Adam } from '../src/training/policy/adam';
import { GridLayout } from '../src/training/policy/grid-positions';
import { generate } from '../src/training/policy/generate';
import { generationBudget } from '../src/training/policy/policy';
import { TransformerConfig, TransformerLM } from '../src/training/policy/transformer';
import { Rng } from '../src/training/random';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';

export interface Workload {
  model: TransformerConfig;
  critic: boolean;
  updateRows: number;
  updateLength: number;
  genRows: number;
  promptLength: number;
  newTokens: number;
  repeats: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median seconds of `repeats` calls after one untimed call. */
export function timedSeconds(repeats: number, f: () => void): number {
  return timed(repeats, f).wall;
}

/**
 * Median wall and CPU seconds (this process, every thread) of `repeats` calls after an untimed
 * one. On a machine shared with other jobs the wall time grows with the load; CPU time per token
 * does much less, so it is the figure to compare single-thread efficiency by.
 */
export function timed(repeats: number, f: () => void): { wall: number; cpu: number } {
  f();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = process.hrtime.bigint();
    const used = process.cpuUsage();
    f();
    const { user, system } = process.cpuUsage(used);
    wall.push(Number(process.hrtime.bigint() - started) / 1e9);
    cpu.push((user + system) / 1e6);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

function randomInts(rng: Rng, n: number, below: number): Int32Array {
  return Int32Array.from({ length: n }, () => Math.floor(rng.next() * below));
}

/** Token 0 opens an observation and 1 ends a grid line: random tokens then carry grid coordinates, as Sokoban's cells do. */
const layoutFor = (config: TransformerConfig): GridLayout | undefined => (config.gridPositions ? { start: 0, newline: 1, markup: new Set() } : undefined);

/** One update step as a function (models and optimisers kept), and the disposer. */
export function updateStep(w: Workload): { step: () => void; dispose: () => void } {
  const rng = new Rng(2, 1);
  const layout = layoutFor(w.model);
  const actor = new TransformerLM(w.model, 1, [], layout);
  const critic = w.critic ? new TransformerLM(w.model, 2, [], layout) : null;
  const actorOpt = new Adam(actor.namedVariables(), 1e-3, 0.01);
  const criticOpt = critic ? new Adam(critic.namedVariables(), 1e-2, 0.01) : null;
  const [R, T, V] = [w.updateRows, w.updateLength, w.model.vocabSize];
  const ids = tf.tensor2d(randomInts(rng, R * T, V), [R, T], 'int32');
  const targets = tf.oneHot(tf.tensor2d(randomInts(rng, R * T, V), [R, T], 'int32'), V) as tf.Tensor3D;
  const weights = tf.tensor2d(Float32Array.from({ length: R * T }, () => (rng.next() < 0.3 ? 1 : 0)), [R, T]);
  const advantages = tf.tensor2d(Float32Array.from({ length: R * T }, () => rng.normal()), [R, T]);
  const returns = tf.tensor2d(Float32Array.from({ length: R * T }, () => rng.normal()), [R, T]);
  const old = tf.tidy(() => tokenLogProbs(actor.forward(ids).logits, targets));
  const names = (model: TransformerLM) => new Map(model.namedVariables().map(([name, v]) => [v.name, name]));
  const apply = (opt: Adam, model: TransformerLM, loss: () => tf.Scalar) => {
    const { grads } = tf.variableGrads(loss, model.trainableVariables());
    const byName = names(model);
    opt.apply(new Map(Object.entries(grads).map(([k, g]) => [byName.get(k)!, g])));
    tf.dispose(grads);
  };
  const masked = (x: tf.Tensor) => tf.div(tf.sum(tf.mul(x, weights)), tf.sum(weights)) as tf.Scalar;
  const step = () => {
    tf.tidy(() => apply(actorOpt, actor, () => {
      const ratio = tf.exp(tf.sub(tokenLogProbs(actor.forward(ids).logits, targets), old));
      return tf.neg(masked(tf.minimum(tf.mul(ratio, advantages), tf.mul(tf.clipByValue(ratio, 0.8, 1.28), advantages))));
    }));
    if (critic && criticOpt) tf.tidy(() => apply(criticOpt, critic, () => masked(tf.square(tf.sub(critic.forward(ids).values, returns)))));
  };
  return { step, dispose: () => { tf.dispose([ids, targets, weights, advantages, returns, old]); actor.dispose(); critic?.dispose(); } };
}

/** One batched generation (prefill and `newTokens` decode steps for every row), and the disposer. */
export function generationStep(w: Workload): { step: () => void; dispose: () => void } {
  const rng = new Rng(3, 1);
  const model = new TransformerLM(w.model, 1, [], layoutFor(w.model));
  const prompts = Array.from({ length: w.genRows }, () => Array.from(randomInts(rng, w.promptLength, w.model.vocabSize)));
  // eosId −1: no row stops early, as on the PyTorch side.
  const step = () => void generate(model, prompts, { temperature: 1, maxNewTokens: w.newTokens, eosId: -1, rng });
  return { step, dispose: () => model.dispose() };
}

export interface Throughput {
  updateTokensPerS: number;
  updateMs: number;
  updateTokensPerCpuS: number;
  generationTokensPerS: number;
  generationMs: number;
  generationTokensPerCpuS: number;
}

/** Update and generation tokens/s (wall and CPU) of the project's trainer on this workload. */
export function measureWorkload(w: Workload): Throughput {
  const update = updateStep(w);
  const u = timed(w.repeats, update.step);
  update.dispose();
  const generation = generationStep(w);
  const g = timed(w.repeats, generation.step);
  generation.dispose();
  const [updateTokens, generatedTokens] = [w.updateRows * w.updateLength, w.genRows * w.newTokens];
  return {
    updateTokensPerS: updateTokens / u.wall,
    updateMs: u.wall * 1000,
    updateTokensPerCpuS: updateTokens / u.cpu,
    generationTokensPerS: generatedTokens / g.wall,
    generationMs: g.wall * 1000,
    generationTokensPerCpuS: generatedTokens / g.cpu,
  };
}

/**
 * The shape `largest`: the largest job the spec's bounds allow, as test/capacity/largest-job.spec.ts
 * trains it on Sokoban (a 4-layer d = 128 model with 8 heads over 512 positions, a critic, 256
 * episodes with 48-token answers).
 */
const LARGEST = {
  environment: { id: 'sokoban' },
  algorithm: { id: 'starpo-ppo' },
  model: { config: { layers: 4, dModel: 128, heads: 8, ffnMultiplier: 4, contextLength: 512 } },
  rollout: { groups: 8, groupSize: 32, maxTokensPerTurn: 48, think: true },
};

/**
 * The model (with its vocabulary and context) of a default job (`frozenlake`, `sokoban`: from
 * demonstrations) or of `largest`, and whether its preset has a critic.
 */
export async function workloadFor(shape: string, repeats: number): Promise<Workload> {
  const spec = parseJobSpec(shape === 'largest' ? LARGEST : { environment: { id: shape }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } });
  const trainer = await Trainer.create(spec);
  const { actor, critic } = (trainer as unknown as { learner: { actor: TransformerLM; critic: unknown } }).learner;
  const model = { ...actor.config };
  const updateLength = model.contextLength - spec.rollout.maxTokensPerTurn;
  const groups = spec.rollout.groups * spec.rollout.groupSize;
  // 32 packed rows almost as long as the context; 128 prompts of half the context and a turn's
  // tokens. The largest shape's rows and prompts go in the trainer's chunks (accumulate.ts,
  // policy.ts): one row's forward and backward over 464 positions nearly fills the training
  // budget; generation runs the policy's floor of 12 prompts a chunk.
  const largest = shape === 'largest';
  const updateRows = largest ? actor.rowsWithin(ACTIVATION_BUDGET_FLOATS, updateLength, true) : 32;
  const genRows = largest ? Math.min(groups, actor.rowsWithin(generationBudget(actor), model.contextLength, false)) : groups;
  trainer.dispose();
  return { model, critic: critic !== null, updateRows, updateLength, genRows, promptLength: Math.floor(model.contextLength / 2), newTokens: spec.rollout.maxTokensPerTurn, repeats };
}

import * as tf from '@tensorflow/tfjs';
import { clipByGlobalNorm } from './algorithms/grad';
import type { Adam } from './policy/adam';
import { PackedBatch, PackedTurns, chunkRows } from './policy/batch';
import type { TransformerLM } from './policy/transformer';

/**
 * Floats a forward or backward chunk may keep alive (≈ 256 MB): batches of any size, RL
 * minibatches and warm-up batches alike, are cut into chunks under it and their gradients
 * accumulated, so the peak memory of a step depends on the model and the sequence length, not on
 * the batch the spec asks for.
 */
export const ACTIVATION_BUDGET_FLOATS = 64 * 1024 * 1024;

/** Chunks of `rows` whose forward pass (with or without gradients) fits `budget` floats. */
export function chunksFor<T extends PackedTurns>(model: TransformerLM, rows: readonly T[], withGradients: boolean, budget = ACTIVATION_BUDGET_FLOATS): T[][] {
  const cost = (count: number, length: number) => model.activationFloats(count, length, withGradients);
  return chunkRows(rows, cost, budget).map((chunk) => chunk.map((i) => rows[i]));
}

/**
 * For each chunk of `rows`: `lossOf` prepares the chunk's constant tensors and returns the loss
 * closure to differentiate (which may `tf.keep` metric scalars). The loss must already be the
 * chunk's share of the whole batch's loss (weights normalised over every row), so that the summed
 * gradients are the whole batch's. They are clipped by global norm and one optimiser step taken.
 * Returns the pre-clip norm.
 */
export function accumulatedStep<T extends PackedTurns>(
  model: TransformerLM,
  optimizer: Adam,
  rows: readonly T[],
  maxGradNorm: number,
  budget: number,
  lossOf: (batch: PackedBatch, chunk: T[]) => () => tf.Scalar,
): number {
  let sum: tf.NamedTensorMap | null = null;
  for (const chunk of chunksFor(model, rows, true, budget)) {
    const batch = new PackedBatch(chunk);
    const { value, grads } = tf.tidy(() => tf.variableGrads(lossOf(batch, chunk), model.trainableVariables()));
    value.dispose();
    if (!sum) {
      sum = grads;
      continue;
    }
    for (const name of Object.keys(grads)) {
      const added = tf.add(sum[name], grads[name]);
      tf.dispose([sum[name], grads[name]]);
      sum[name] = added;
    }
  }
  return applyClipped(optimizer, sum!, variableNames(model), maxGradNorm);
}

/** Clips gradients by global norm, applies them by parameter name, disposes them; returns the pre-clip norm. */
export function applyClipped(optimizer: Adam, grads: tf.NamedTensorMap, names: Map<string, string>, maxGradNorm: number): number {
  const keys = Object.keys(grads);
  const { clipped, norm } = clipByGlobalNorm(keys.map((k) => grads[k]), maxGradNorm);
  if (Number.isFinite(norm)) optimizer.apply(new Map(keys.map((k, i) => [names.get(k)!, clipped[i]])));
  tf.dispose([...Object.values(grads), ...clipped]);
  return norm;
}

function variableNames(model: TransformerLM): Map<string, string> {
  return new Map(model.namedVariables().map(([name, v]) => [v.name, name]));
}

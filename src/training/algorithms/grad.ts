/**
 * Update diagnostics and gradient clipping: the pre-clip global gradient norm is one of the
 * collapse signals (`grad_norm/actor`, `grad_norm/critic`), explained variance tells whether the
 * critic's baseline is any use.
 */
import * as tf from '@tensorflow/tfjs';

/** ‖g‖ = √(Σ_i Σ g_i²) over all gradient tensors together (0 for none), read back as a number. */
export function globalNorm(grads: readonly tf.Tensor[]): number {
  if (grads.length === 0) return 0;
  const norm = tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))));
  const value = norm.dataSync()[0];
  norm.dispose();
  return value;
}

/**
 * Global-norm clipping as `torch.nn.utils.clip_grad_norm_` (Pascanu et al. 2013, "On the
 * difficulty of training recurrent neural networks"): g ← g · min(1, maxNorm / (‖g‖ + 1e-6)).
 *
 * Returns new tensors (the caller disposes both the inputs and `clipped`) and the norm before
 * clipping, which is what gets reported. A non-finite norm is returned as is and the clipped
 * gradients are then NaN or 0: check `Number.isFinite(norm)` and skip the optimiser step, as
 * veRL does.
 */
export function clipByGlobalNorm(
  grads: readonly tf.Tensor[],
  maxNorm: number,
): { clipped: tf.Tensor[]; norm: number } {
  const norm = globalNorm(grads);
  const scale = Math.min(1, maxNorm / (norm + 1e-6));
  const clipped = tf.tidy(() => grads.map((g) => tf.mul(g, scale)));
  return { clipped, norm };
}

/**
 * Explained variance of the critic, 1 − Var(R − V) / Var(R) (population variances; the ratio
 * does not depend on the choice). 1 is a perfect critic, 0 no better than a constant, negative
 * worse than a constant. NaN when Var(R) = 0, as in OpenAI baselines, rather than a made-up
 * number.
 */
export function explainedVariance(values: readonly number[], returns: readonly number[]): number {
  if (values.length !== returns.length) {
    throw new RangeError(`explainedVariance: ${values.length} values but ${returns.length} returns`);
  }
  const varReturns = populationVariance(returns);
  if (!(varReturns > 0)) return NaN;
  return 1 - populationVariance(returns.map((r, i) => r - values[i])) / varReturns;
}

function populationVariance(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const m = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  return xs.reduce((sum, x) => sum + (x - m) ** 2, 0) / xs.length;
}

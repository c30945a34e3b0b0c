/**
 * Per-token quantities of the policy's next-token distribution, built only from ops that have
 * gradients on every tfjs backend: the target token is picked with a one-hot mask and a sum,
 * because `tf.gather` has no gradient on wasm and `gatherND`/`stridedSlice` have none anywhere.
 */
import * as tf from '@tensorflow/tfjs';

// tfjs 4.22 has no tf.stopGradient; a custom gradient that returns zeros is the same thing.
const stopGradientOp = tf.customGrad((x) => {
  const input = x as tf.Tensor;
  // clone(): the op's output must be a tensor of its own, not the input itself.
  return { value: input.clone(), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) };
});

/**
 * sg(x): identity in the forward pass, zero gradient in the backward pass (PyTorch's `detach`).
 * Used for AEPO's gradient-preserving clip r/sg(r) and for entropy-aware advantages.
 */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  return stopGradientOp(x) as T;
}

/**
 * log π(y_t | ·) for the sampled tokens: Σ_v onehot(y_t)_v · log softmax(z_t / τ)_v.
 *
 * @param logits [B, T, V] unnormalised scores; finite (mask excluded tokens with a large negative
 *   number, not −Infinity, which turns into NaN through 0·∞ here and in `tokenEntropy`).
 * @param targetsOneHot [B, T, V] one-hot of the token actually taken (all zeros on padding, which
 *   yields 0 there).
 * @param temperature τ used when sampling; the log-probs must be of the distribution that was
 *   sampled from, or the PPO ratio is biased.
 * @returns [B, T]
 */
export function tokenLogProbs(
  logits: tf.Tensor3D,
  targetsOneHot: tf.Tensor3D,
  temperature = 1,
): tf.Tensor2D {
  return tf.tidy(() => {
    const scaled = temperature === 1 ? logits : tf.div(logits, temperature);
    return tf.sum(tf.mul(tf.logSoftmax(scaled), targetsOneHot), -1) as tf.Tensor2D;
  });
}

/**
 * Token entropy H_t = −Σ_v p_v log p_v with p = softmax(z_t / τ), in nats (log |V| for a uniform
 * distribution; divide by log |V| for thresholds that do not depend on the vocabulary size).
 *
 * @param logits [B, T, V]
 * @returns [B, T]
 */
export function tokenEntropy(logits: tf.Tensor3D, temperature = 1): tf.Tensor2D {
  return tf.tidy(() => {
    const scaled = temperature === 1 ? logits : tf.div(logits, temperature);
    // log-softmax once and p = exp(log p): no log(0) even where softmax underflows to 0.
    const logP = tf.logSoftmax(scaled);
    return tf.neg(tf.sum(tf.mul(tf.exp(logP), logP), -1)) as tf.Tensor2D;
  });
}

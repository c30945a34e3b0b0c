/**
 * Actor, critic and KL losses. All tensors are [B, T] (row, token position); every loss is
 * Σ w·ℓ with per-token weights w from `aggregationWeights` (mask and aggregation in one), so a
 * loss never averages by itself. Inputs other than the one being differentiated (old log-probs,
 * advantages, returns, weights) are plain constants and need no stop-gradient.
 */
import * as tf from '@tensorflow/tfjs';

import { weightedTokenSum } from './aggregation';
import { stopGradient } from './tokenDistributions';

export { aggregationWeights, weightedTokenSum, type AggregationMode } from './aggregation';
export { stopGradient, tokenEntropy, tokenLogProbs } from './tokenDistributions';

/**
 * log-ratio bound before exp, as veRL: a stale or broken token cannot make the ratio overflow to
 * Infinity (and Infinity·0 = NaN on masked positions).
 */
const LOG_RATIO_BOUND = 20;

/** 1 where a token counts in the loss (w > 0), as float32. */
function countedMask(weights: tf.Tensor2D): tf.Tensor2D {
  return tf.cast(tf.greater(weights, 0), 'float32') as tf.Tensor2D;
}

/** Share of counted tokens where `condition` holds; 0 when no token counts. */
function countedShare(condition: tf.Tensor, counted: tf.Tensor2D): tf.Scalar {
  const hits = tf.sum(tf.mul(tf.cast(condition, 'float32'), counted));
  return tf.div(hits, tf.maximum(tf.sum(counted), 1)) as tf.Scalar;
}

export interface PolicyLossInputs {
  /** log π_θ of the taken tokens, [B, T] — the tensor the gradient flows through. */
  logProbs: tf.Tensor2D;
  /** log π_old at rollout time, [B, T]. */
  oldLogProbs: tf.Tensor2D;
  /** Per-token advantages, [B, T]. */
  advantages: tf.Tensor2D;
  /** Aggregation weights, [B, T] (see `aggregationWeights`). */
  weights: tf.Tensor2D;
  /** ε_low: the ratio is clipped below at 1 − ε_low. */
  clipLow: number;
  /** ε_high: the ratio is clipped above at 1 + ε_high ("clip-higher" when > ε_low, DAPO). */
  clipHigh: number;
  /** Dual-clip constant c > 1 (3 in StarPO); null, undefined or 0 (the job config's "off")
   * disables dual clipping. */
  dualClip?: number | null;
  /** `'ppo'` (hard clip) or `'aepo'` (gradient-preserving upper clip). Default `'ppo'`. */
  mode?: 'ppo' | 'aepo';
}

export type PolicyLossOutputs = {
  /** Σ w·ℓ, the scalar to minimise. */
  loss: tf.Scalar;
  /** `clip/fraction_high`: share of counted tokens with A > 0 and r > 1 + ε_high. */
  clipFractionHigh: tf.Scalar;
  /** `clip/fraction_low`: share of counted tokens with A < 0 and r < 1 − ε_low. */
  clipFractionLow: tf.Scalar;
  /**
   * Σ w·((r − 1) − log r), the k3 estimate of KL(π_old ‖ π_θ) (Schulman's "Approximating KL"):
   * never negative, unlike k1 (veRL's `ppo_kl`), so a drifting policy cannot hide behind tokens
   * whose ratio moved the other way.
   */
  approxKl: tf.Scalar;
};

/**
 * Clipped policy-gradient loss with r = exp(log π_θ − log π_old):
 *
 *   PPO (Schulman et al. 2017), decoupled bounds (DAPO, Yu et al. 2025):
 *     ℓ = max(−A·r, −A·clip(r, 1 − ε_low, 1 + ε_high))
 *   AEPO entropy clipping-balanced loss (Dong et al. 2025, "Agentic Entropy-Balanced Policy
 *   Optimization"):
 *     ℓ = max(−A·r, −A·clip(r, 1 − ε_low, (1 + ε_high)·r/sg(r)))
 *     — the same value as PPO, but a token above the upper bound keeps the gradient
 *     −(1 + ε_high)·A·∇log π instead of 0, so high-entropy tokens are not silently dropped.
 *   Dual clip for A < 0 (Ye et al. 2020, "Mastering Complex Control in MOBA Games"):
 *     ℓ = min(ℓ, −c·A), bounding the loss of a token whose ratio has run away.
 *
 * The loss is Σ w·ℓ. The metrics are computed alongside and carry no useful gradient; inside a
 * `tf.grad`/`variableGrads` closure everything but the returned scalar is disposed, so `tf.keep`
 * the metrics to read them afterwards.
 */
export function ppoPolicyLoss(inputs: PolicyLossInputs): PolicyLossOutputs {
  const { logProbs, oldLogProbs, advantages, weights, clipLow, clipHigh, dualClip, mode = 'ppo' } = inputs;
  const dualClipOn = dualClip !== null && dualClip !== undefined && dualClip !== 0;
  if (dualClipOn && !(dualClip > 1)) {
    // 0 < c ≤ 1 would cap the loss of negative-advantage tokens inside the trust region.
    throw new RangeError(`dualClip must be > 1 (or 0/null to disable), got ${dualClip}`);
  }
  return tf.tidy(() => {
    const logRatio = tf.clipByValue(tf.sub(logProbs, oldLogProbs), -LOG_RATIO_BOUND, LOG_RATIO_BOUND);
    const ratio = tf.exp(logRatio);
    const negAdvantages = tf.neg(advantages);
    // AEPO: r/sg(r) is 1 in value but carries ∇log π, so the upper bound passes gradient through.
    const upperBound =
      mode === 'aepo' ? tf.mul(tf.div(ratio, stopGradient(ratio)), 1 + clipHigh) : tf.scalar(1 + clipHigh);
    const clippedRatio = tf.minimum(tf.maximum(ratio, 1 - clipLow), upperBound);
    // maximum() sends the gradient to its first argument on ties, i.e. to −A·r inside the clip.
    let perToken: tf.Tensor = tf.maximum(tf.mul(negAdvantages, ratio), tf.mul(negAdvantages, clippedRatio));
    if (dualClipOn) {
      const dualBound = tf.mul(negAdvantages, dualClip);
      perToken = tf.where(tf.less(advantages, 0), tf.minimum(perToken, dualBound), perToken);
    }

    const counted = countedMask(weights);
    return {
      loss: weightedTokenSum(perToken, weights),
      clipFractionHigh: countedShare(
        tf.logicalAnd(tf.greater(advantages, 0), tf.greater(ratio, 1 + clipHigh)),
        counted,
      ),
      clipFractionLow: countedShare(tf.logicalAnd(tf.less(advantages, 0), tf.less(ratio, 1 - clipLow)), counted),
      approxKl: weightedTokenSum(tf.sub(tf.sub(ratio, 1), logRatio), weights),
    };
  });
}

/**
 * AEPO entropy-aware advantage (Dong et al. 2025): A' = A·(1 + α·sg(Ĥ)), where
 * Ĥ = (H − mean(H)) / (std(H) + 1e-8) standardises the token entropy over the counted tokens
 * (w > 0) of the batch, unbiased std. Tokens the policy is unsure about get larger updates.
 * Ĥ is 0 on uncounted tokens and when the entropy is constant.
 *
 * @param advantages [B, T]
 * @param entropy [B, T] from `tokenEntropy`; may be on the gradient tape, sg() detaches it.
 * @param weights [B, T] aggregation weights (only w > 0 matters here).
 * @returns [B, T]
 */
export function entropyAwareAdvantages(
  advantages: tf.Tensor2D,
  entropy: tf.Tensor2D,
  weights: tf.Tensor2D,
  alpha: number,
): tf.Tensor2D {
  return tf.tidy(() => {
    const isCounted = tf.greater(weights, 0);
    const counted = countedMask(weights);
    // where() rather than ×mask: a NaN entropy on a padding position must not reach the sums.
    const h = tf.where(isCounted, stopGradient(entropy), tf.zerosLike(entropy));
    const n = tf.sum(counted);
    const hMean = tf.div(tf.sum(h), tf.maximum(n, 1));
    const centred = tf.mul(tf.sub(h, hMean), counted);
    const hStd = tf.sqrt(tf.div(tf.sum(tf.square(centred)), tf.maximum(tf.sub(n, 1), 1)));
    const hStandardised = tf.div(centred, tf.add(hStd, 1e-8));
    return tf.mul(advantages, tf.add(1, tf.mul(hStandardised, alpha))) as tf.Tensor2D;
  });
}

export interface ValueLossInputs {
  /** V_φ now, [B, T] — the tensor the gradient flows through. */
  values: tf.Tensor2D;
  /** V at rollout time, [B, T]. */
  oldValues: tf.Tensor2D;
  /** Regression targets (GAE returns), [B, T]. */
  returns: tf.Tensor2D;
  weights: tf.Tensor2D;
  /** c: how far V may move from V_old before the clipped branch takes over (0.5 in StarPO). */
  clip: number;
}

/**
 * Clipped value loss (PPO2 in OpenAI baselines; veRL's `compute_value_loss`):
 *   ℓ = ½·max((V − R)², (V_old + clip(V − V_old, −c, c) − R)²),  loss = Σ w·ℓ.
 * Taking the max makes the clip pessimistic: it only ever removes gradient, never adds it.
 */
export function clippedValueLoss(inputs: ValueLossInputs): tf.Scalar {
  const { values, oldValues, returns, weights, clip } = inputs;
  return tf.tidy(() => {
    const clippedValues = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clip, clip));
    const unclippedError = tf.square(tf.sub(values, returns));
    const clippedError = tf.square(tf.sub(clippedValues, returns));
    return tf.mul(weightedTokenSum(tf.maximum(unclippedError, clippedError), weights), 0.5) as tf.Scalar;
  });
}

export interface KlInputs {
  /** log π_θ of the taken tokens, [B, T]. */
  logProbs: tf.Tensor2D;
  /** log π_ref of the same tokens under the frozen reference policy, [B, T]. */
  refLogProbs: tf.Tensor2D;
  weights: tf.Tensor2D;
}

/**
 * k1 estimator of KL(π_θ ‖ π_ref) on tokens sampled from π_θ (Schulman 2020, "Approximating KL
 * Divergence"): Σ w·(log π_θ − log π_ref). Unbiased, but single tokens can be negative.
 */
export function klK1(inputs: KlInputs): tf.Scalar {
  return tf.tidy(() => weightedTokenSum(tf.sub(inputs.logProbs, inputs.refLogProbs), inputs.weights));
}

/**
 * k3 estimator (Schulman 2020; veRL's `low_var_kl`): with d = log π_ref − log π_θ,
 * Σ w·(e^d − d − 1). Unbiased and non-negative per token, lower variance than k1. d is bounded
 * to ±20 before exp, as in veRL.
 */
export function klK3(inputs: KlInputs): tf.Scalar {
  return tf.tidy(() => {
    const d = tf.clipByValue(tf.sub(inputs.refLogProbs, inputs.logProbs), -LOG_RATIO_BOUND, LOG_RATIO_BOUND);
    return weightedTokenSum(tf.sub(tf.sub(tf.exp(d), d), 1), inputs.weights);
  });
}

/**
 * k3 = (r − 1) − log r for one sample's log r = log π_new − log π_old (drawn from π_old): an
 * unbiased estimate of KL(π_old ‖ π_new) that is never negative (Schulman, "Approximating KL
 * divergence"). log r is bounded to ±20 like the PPO ratio.
 */
export function k3(logRatio: number): number {
  const bounded = Math.max(-LOG_RATIO_BOUND, Math.min(LOG_RATIO_BOUND, logRatio));
  return Math.expm1(bounded) - bounded;
}

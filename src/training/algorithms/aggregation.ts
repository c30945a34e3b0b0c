/**
 * Loss aggregation. Every loss in `losses.ts` is Σ_{b,t} w_{b,t} · ℓ_{b,t}: the per-token weights
 * w carry both the mask (0 on prompt, observation and padding tokens) and the aggregation rule,
 * and sum to 1 over a whole update batch. Building them once, here, keeps the rule in one place
 * and makes micro-batching exact: the weights of one micro-batch sum to its share of the batch,
 * so summed micro-batch gradients equal the full-batch gradient.
 */
import * as tf from '@tensorflow/tfjs';

/**
 * How token losses are averaged (veRL's `loss_agg_mode`):
 * - `'seq-mean-token-mean'`: mean over each trajectory's tokens, then mean over trajectories
 *   (StarPO, GRPO): w = 1 / (n_j · N) for a token of trajectory j with n_j loss tokens, N the
 *   number of trajectories that have any loss token.
 * - `'token-mean'`: mean over all loss tokens of the batch (DAPO): w = 1 / Σ_j n_j, so longer
 *   trajectories weigh more.
 */
export type AggregationMode = 'seq-mean-token-mean' | 'token-mean';

/**
 * Per-token weights for a batch of rows, where a trajectory may span several rows (one per turn).
 *
 * @param mask [B][T] 1 for a token that counts in the loss (an assistant token), 0 otherwise.
 * @param rowTrajectory [B] the trajectory each row belongs to (any integer id).
 * @returns [B][T] weights, 0 where the mask is 0, summing to 1 (or all 0 if no token counts).
 */
export function aggregationWeights(
  mask: readonly (readonly number[])[],
  rowTrajectory: readonly number[],
  mode: AggregationMode,
): number[][] {
  if (mask.length !== rowTrajectory.length) {
    throw new RangeError(`aggregationWeights: ${mask.length} rows but ${rowTrajectory.length} trajectory ids`);
  }
  const tokensPerTrajectory = new Map<number, number>();
  mask.forEach((row, b) => {
    const count = row.reduce((sum, m) => sum + (m > 0 ? 1 : 0), 0);
    const id = rowTrajectory[b];
    tokensPerTrajectory.set(id, (tokensPerTrajectory.get(id) ?? 0) + count);
  });
  let totalTokens = 0;
  let trajectoriesWithTokens = 0;
  for (const count of tokensPerTrajectory.values()) {
    totalTokens += count;
    // A trajectory with no loss token is not averaged in (veRL would produce 0/0 for it).
    if (count > 0) trajectoriesWithTokens += 1;
  }
  return mask.map((row, b) => {
    const perToken =
      mode === 'token-mean'
        ? 1 / totalTokens
        : 1 / (tokensPerTrajectory.get(rowTrajectory[b])! * trajectoriesWithTokens);
    return row.map((m) => (m > 0 ? perToken : 0));
  });
}

/**
 * Σ w·x: the weighted token mean, given weights from `aggregationWeights`. Deliberately not
 * divided by Σ w, so that a micro-batch contributes its exact share (see the file comment).
 */
export function weightedTokenSum(x: tf.Tensor, weights: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.sum(tf.mul(x, weights)) as tf.Scalar);
}

/**
 * Advantage estimators on plain number arrays (no tensors): the trainer computes advantages once
 * per step on the CPU and hands them to the losses as a [B, T] tensor.
 *
 * Group filters and GiGPO live in their own files and are re-exported here, so that
 * `algorithms/advantages` is the one import for everything that turns rewards into advantages.
 */
import { mean, unbiasedStd } from './stats';

export { mean, unbiasedStd, whiten } from './stats';
export { dynamicSamplingKeep, passAtK, selectGroupsByRewardStd } from './groupFilters';
export {
  discountedStepReturns,
  gigpoAdvantages,
  gigpoStepAdvantages,
  gigpoTurnAdvantages,
  type GigpoEpisode,
  type GigpoNormalization,
  type GigpoOptions,
  type GigpoStep,
} from './gigpo';

/** Below this in-group std the returns are treated as identical (no learning signal). */
export const ZERO_STD_THRESHOLD = 1e-8;

/**
 * Generalised advantage estimation (Schulman et al. 2016, "High-Dimensional Continuous Control
 * Using Generalized Advantage Estimation") over one trajectory's assistant tokens, in order:
 *
 *   δ_t = r_t + γ·V_{t+1} − V_t,  V_T = 0 (the trajectory ends: no bootstrap),
 *   A_t = δ_t + γλ·A_{t+1},       returns_t = A_t + V_t (the critic's regression target).
 *
 * StarPO puts the whole trajectory return R on the last assistant token (all other r_t = 0);
 * with the default γ = λ = 1 this gives A_t = R − V_t for every token.
 */
export function gae(
  rewards: readonly number[],
  values: readonly number[],
  gamma: number,
  lambda: number,
): { advantages: number[]; returns: number[] } {
  if (rewards.length !== values.length) {
    throw new RangeError(`gae: ${rewards.length} rewards but ${values.length} values`);
  }
  const n = rewards.length;
  const advantages = new Array<number>(n);
  let nextAdvantage = 0;
  for (let t = n - 1; t >= 0; t--) {
    const nextValue = t + 1 < n ? values[t + 1] : 0;
    const delta = rewards[t] + gamma * nextValue - values[t];
    nextAdvantage = delta + gamma * lambda * nextAdvantage;
    advantages[t] = nextAdvantage;
  }
  return { advantages, returns: advantages.map((a, t) => a + values[t]) };
}

/**
 * GRPO outcome advantages (Shao et al. 2024, "DeepSeekMath"): per group g of rollouts from the
 * same initial state, A_i = (R_i − μ_g) / (σ_g + eps).
 *
 * σ_g is the unbiased (n − 1) std, matching `torch.std` in veRL's and RAGEN's GRPO. When
 * σ_g < 1e-8 (all returns equal, or a group of one) every member gets 0: the group carries no
 * comparison, and dividing by eps alone would blow float noise up to ±1e6-sized advantages.
 */
export function groupZScores(groupReturns: readonly (readonly number[])[], eps = 1e-6): number[][] {
  return groupReturns.map((returns) => {
    const sigma = unbiasedStd(returns);
    if (sigma < ZERO_STD_THRESHOLD) return returns.map(() => 0);
    const mu = mean(returns);
    return returns.map((r) => (r - mu) / (sigma + eps));
  });
}

/**
 * AEPO entropy-aware advantage (Dong et al. 2025) on number arrays: A' = A·(1 + α·Ĥ), where
 * Ĥ = (H − mean H)/(std H + 1e-8) standardises the token entropies over every token given (the
 * minibatch's loss tokens), unbiased std; the same values as the tensor `entropyAwareAdvantages`
 * with every token counted. The entropies are constants here, which is the paper's sg(Ĥ).
 * `advantages[i]` and `entropies[i]` are one row's tokens.
 */
export function entropyShapedAdvantages(advantages: readonly (readonly number[])[], entropies: readonly (readonly number[])[], alpha: number): number[][] {
  const all = entropies.flat();
  const hMean = mean(all);
  const hStd = all.length > 1 ? unbiasedStd(all) : 0;
  return advantages.map((row, i) => {
    if (row.length !== entropies[i].length) throw new RangeError(`entropyShapedAdvantages: row ${i} has ${row.length} advantages but ${entropies[i].length} entropies`);
    return row.map((a, t) => a * (1 + alpha * ((entropies[i][t] - hMean) / (hStd + 1e-8))));
  });
}

/**
 * Which rollout groups a step trains on, and group-level success metrics. A group is the
 * `groupSize` rollouts started from one initial state; inputs are indexed [group][rollout].
 */
import { unbiasedStd } from './stats';

/** Same threshold as the GRPO z-score: below it a group's returns count as identical. */
const ZERO_STD = 1e-8;

/**
 * StarPO-S variance-based trajectory filtering (Wang et al. 2025, "RAGEN: Understanding
 * Self-Evolution in LLM Agents via Multi-Turn Reinforcement Learning"): rank groups by the
 * in-group unbiased std of raw returns and keep the top k = min(G, max(⌈keepFraction·G⌉,
 * minGroups)) — low-variance groups are states the policy already treats deterministically and
 * give little signal. Ties are broken by the lower group index, so the choice is deterministic.
 *
 * Returns the kept group indices in ascending order. RAGEN itself takes ⌊keepFraction·G⌋; the
 * ceiling here never keeps fewer groups than the fraction asks for.
 */
export function selectGroupsByRewardStd(
  groupReturns: readonly (readonly number[])[],
  keepFraction: number,
  minGroups: number,
): number[] {
  if (!(keepFraction >= 0 && keepFraction <= 1)) {
    throw new RangeError(`keepFraction must be in [0, 1], got ${keepFraction}`);
  }
  const groupCount = groupReturns.length;
  // The small slack keeps ⌈0.3·10⌉ at 3: 0.3·10 is 3.0000000000000004 in floating point.
  const byFraction = Math.ceil(keepFraction * groupCount - 1e-9);
  const keepCount = Math.min(groupCount, Math.max(byFraction, minGroups));
  const stds = groupReturns.map((returns) => unbiasedStd(returns));
  const ranked = stds.map((_, index) => index).sort((a, b) => stds[b] - stds[a] || a - b);
  return ranked.slice(0, keepCount).sort((a, b) => a - b);
}

/**
 * DAPO dynamic sampling filter (Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning
 * System at Scale"): the indices of groups whose returns are not all equal (in-group std above
 * 1e-8), i.e. the groups whose GRPO advantages are not all zero. A group of one is dropped (veRL's
 * DAPO recipe keeps it; under GRPO its advantage is 0 anyway).
 */
export function dynamicSamplingKeep(groupReturns: readonly (readonly number[])[]): number[] {
  const kept: number[] = [];
  groupReturns.forEach((returns, index) => {
    if (unbiasedStd(returns) > ZERO_STD) kept.push(index);
  });
  return kept;
}

/**
 * pass@k with k = group size, the empirical estimate over groups: the share of groups in which at
 * least one rollout succeeded. 0 when there are no groups.
 */
export function passAtK(groupSuccess: readonly (readonly boolean[])[]): number {
  if (groupSuccess.length === 0) return 0;
  const solved = groupSuccess.filter((successes) => successes.some(Boolean)).length;
  return solved / groupSuccess.length;
}

/** What `sampleWithDynamicSampling` drew: every group in drawing order, and which to train on. */
export interface DynamicSample<G> {
  groups: G[];
  /** Indices into `groups` of the informative groups trained on (at most `wanted`, in order). */
  kept: number[];
  /** Batches drawn, the first included. */
  batches: number;
}

/**
 * DAPO's dynamic sampling with its code's bound: draw batches of groups until `wanted`
 * informative groups (returns not all equal, `dynamicSamplingKeep`) are in hand or `maxBatches`
 * batches are drawn, and keep the first `wanted` in drawing order (veRL's DAPO trainer trims the
 * batch the same way). Where the code raises an error once its bound is spent, this trains on
 * what it has, which may be fewer groups or none.
 */
export async function sampleWithDynamicSampling<G>(drawBatch: () => G[] | Promise<G[]>, returnsOf: (group: G) => readonly number[], wanted: number, maxBatches: number): Promise<DynamicSample<G>> {
  const groups: G[] = [];
  let informative: number[] = [];
  let batches = 0;
  while (batches < Math.max(1, maxBatches) && informative.length < wanted) {
    groups.push(...(await drawBatch()));
    batches++;
    informative = dynamicSamplingKeep(groups.map(returnsOf));
  }
  return { groups, kept: informative.slice(0, wanted), batches };
}

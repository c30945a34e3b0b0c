/**
 * The decisions of ARPO's and AEPO's tree rollouts as pure functions, so each can be checked
 * against hand-computed values (docs/training.md, "Tree rollouts").
 */

/** Which tree rollout's branch rule: ARPO's (no penalty) or AEPO's (consecutive-branch penalty). */
export type BranchRule = 'arpo' | 'aepo';

/**
 * The entropy of one generated segment as ARPO's and AEPO's rollout code estimate it: the token
 * entropies H_j = −Σ p log p of its first `tokens` (≤ 20) positions, summed (their code
 * concatenates the log-probabilities of those positions into one list before taking −Σ p log p)
 * and divided by ln |V|. Their code sees only vLLM's top-k log-probabilities per position; here
 * each H_j is the exact entropy of the distribution the token was drawn from.
 */
export function segmentEntropy(entropies: readonly number[], vocabSize: number, tokens: number): number {
  let sum = 0;
  for (let j = 0; j < Math.min(tokens, entropies.length); j++) sum += entropies[j];
  return sum / Math.log(vocabSize);
}

/**
 * AEPO's entropy pre-monitoring: of the k trajectories of a prompt, m start from the prompt
 * (global samples) and k − m are left to branching, with
 *   m = clamp(⌊k·σ(β·(H_root − H̄_tool))⌋ + 1, 1, k),  β = 0.5 in AEPO's code,
 * H_root the entropy of a probe's first segment and H̄_tool the mean segment entropy of a probe
 * episode. A prompt whose tool feedback raises uncertainty (H̄_tool > H_root) gets fewer global
 * samples and more branches.
 */
export function globalSampleCount(k: number, rootEntropy: number, toolEntropy: number, beta = 0.5): number {
  const sigmoid = 1 / (1 + Math.exp(-beta * (rootEntropy - toolEntropy)));
  return Math.max(1, Math.min(k, Math.floor(k * sigmoid) + 1));
}

/** One branch decision: u ~ U[0, 1), the entropy change ΔH, and the branches in a row so far. */
export interface BranchDecision {
  u: number;
  entropyChange: number;
  consecutiveBranches: number;
}

export interface BranchParameters {
  rule: BranchRule;
  /** τ. */
  threshold: number;
  /** w. */
  entropyWeight: number;
  /** The per-branch damping of AEPO's penalty factor max(0, 1 − penalty·l). */
  penalty: number;
}

/**
 * The score a decision compares with τ, as each code computes it:
 *   ARPO: p = clip(u − w·ΔH, 0, 1), branch iff p ≤ τ (a rise in entropy lowers p);
 *   AEPO: p = clip((u + w·ΔH)·max(0, 1 − penalty·l), 0, 1), branch iff p ≥ τ.
 * With u uniform both branch with probability about τ' + w·ΔH (τ' = τ for ARPO, 1 − τ for AEPO),
 * equal at τ = 0.5; AEPO's factor makes a run of l branching rounds less likely to go on.
 */
export function branchScore(decision: BranchDecision, parameters: BranchParameters): number {
  const { u, entropyChange, consecutiveBranches } = decision;
  const clip = (x: number) => Math.max(0, Math.min(1, x));
  if (parameters.rule === 'arpo') return clip(u - parameters.entropyWeight * entropyChange);
  return clip((u + parameters.entropyWeight * entropyChange) * Math.max(0, 1 - parameters.penalty * consecutiveBranches));
}

/** Whether a decision branches (see `branchScore`). */
export function shouldBranch(decision: BranchDecision, parameters: BranchParameters): boolean {
  const score = branchScore(decision, parameters);
  return parameters.rule === 'arpo' ? score <= parameters.threshold : score >= parameters.threshold;
}

/**
 * GiGPO (Feng et al. 2025, "Group-in-Group Policy Optimization for LLM Agent Training"): besides
 * the episode-level GRPO advantage, steps taken from the same environment state ("anchor state")
 * in different rollouts of a group are compared with each other, which gives per-step credit
 * without a critic.
 */
import { mean, unbiasedStd } from './stats';

/** One environment step of a rollout, as GiGPO sees it. */
export interface GigpoStep {
  /** Identity of the state the step was taken from (e.g. the rendered observation). */
  anchorKey: string;
  /** Discounted return from this step to the end of the episode (see `discountedStepReturns`). */
  stepReturn: number;
}

/**
 * `'mean-std'`: (R − μ)/(σ + eps), the paper's F_norm = std. `'mean'`: R − μ, the paper's
 * F_norm = 1 (verl-agent's `mean_norm`).
 */
export type GigpoNormalization = 'mean-std' | 'mean';

/** Discounted returns G_t = r_t + γ·G_{t+1}, G_T = 0, over one episode's step rewards. */
export function discountedStepReturns(rewards: readonly number[], gamma: number): number[] {
  const returns = new Array<number>(rewards.length);
  let next = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    next = rewards[t] + gamma * next;
    returns[t] = next;
  }
  return returns;
}

/**
 * GiGPO step-level advantages for one group. `trajectories[i][t]` is step t of rollout i; steps
 * with equal `anchorKey` (from any rollout, including repeats within one rollout) form a step
 * group, and within it
 *
 *   A^S = (R_t − mean(R over the step group)) / (std + eps)   ('mean-std', unbiased std), or
 *   A^S = R_t − mean(R over the step group)                   ('mean').
 *
 * Returns are the γ = 0.95 discounted step returns in the paper. A step group of one, or one
 * whose returns are all equal (std < 1e-8), gives 0: nothing to compare against. (verl-agent
 * gives a singleton its raw return instead; 0 keeps unmatched steps from dominating.)
 */
export function gigpoStepAdvantages(
  trajectories: readonly (readonly GigpoStep[])[],
  options: { normalization?: GigpoNormalization; eps?: number } = {},
): number[][] {
  const normalization = options.normalization ?? 'mean-std';
  const eps = options.eps ?? 1e-6;
  const returnsByAnchor = new Map<string, number[]>();
  for (const steps of trajectories) {
    for (const step of steps) {
      const returns = returnsByAnchor.get(step.anchorKey) ?? [];
      returns.push(step.stepReturn);
      returnsByAnchor.set(step.anchorKey, returns);
    }
  }
  const statsByAnchor = new Map<string, { mu: number; sigma: number }>();
  for (const [key, returns] of returnsByAnchor) {
    statsByAnchor.set(key, { mu: mean(returns), sigma: unbiasedStd(returns) });
  }
  return trajectories.map((steps) =>
    steps.map((step) => {
      const { mu, sigma } = statsByAnchor.get(step.anchorKey)!;
      // sigma is 0 for a singleton too (unbiasedStd of one value), so this covers both cases.
      if (sigma < 1e-8) return 0;
      const centred = step.stepReturn - mu;
      return normalization === 'mean' ? centred : centred / (sigma + eps);
    }),
  );
}

/**
 * GiGPO combined advantage per step: A = A^E + ω·A^S, with A^E the episode-level (GRPO) advantage
 * of the rollout and A^S its step-level advantage; ω = 1 in the paper.
 */
export function gigpoAdvantages(
  episodeAdv: readonly number[],
  stepAdv: readonly (readonly number[])[],
  omega = 1,
): number[][] {
  if (episodeAdv.length !== stepAdv.length) {
    throw new RangeError(`gigpoAdvantages: ${episodeAdv.length} episodes but ${stepAdv.length} step lists`);
  }
  return stepAdv.map((steps, i) => steps.map((a) => episodeAdv[i] + omega * a));
}

/** One rollout of a group as GiGPO reads it: its return and, per turn, the state and reward. */
export interface GigpoEpisode {
  return: number;
  steps: readonly { anchorKey: string; reward: number }[];
}

export interface GigpoOptions {
  /** ω, the weight of the step advantage (1 in the paper). */
  omega: number;
  /** Discount of the step returns (0.95 in the paper). */
  gamma: number;
  normalization: GigpoNormalization;
  eps?: number;
}

/**
 * GiGPO advantage of every turn of one group's rollouts: A = A^E + ω·A^S, where the episode
 * advantage A^E = (R − mean R)/(std R + eps) over the group ('mean': R − mean R; 0 when the
 * returns are all equal, as GRPO) and A^S compares the γ-discounted returns of the steps taken
 * from the same observation (`gigpoStepAdvantages`). verl-agent normalises both levels the same
 * way (its `mode`), and so does this.
 */
export function gigpoTurnAdvantages(episodes: readonly GigpoEpisode[], options: GigpoOptions): number[][] {
  const eps = options.eps ?? 1e-6;
  const returns = episodes.map((e) => e.return);
  const mu = mean(returns);
  const sigma = unbiasedStd(returns);
  const episodeAdv = returns.map((r) => {
    if (sigma < 1e-8) return 0;
    return options.normalization === 'mean' ? r - mu : (r - mu) / (sigma + eps);
  });
  const steps = episodes.map((e) => {
    const stepReturns = discountedStepReturns(e.steps.map((s) => s.reward), options.gamma);
    return e.steps.map((s, t) => ({ anchorKey: s.anchorKey, stepReturn: stepReturns[t] }));
  });
  const stepAdv = gigpoStepAdvantages(steps, { normalization: options.normalization, eps });
  return gigpoAdvantages(episodeAdv, stepAdv, options.omega);
}

import { mean, unbiasedStd } from '../algorithms/stats';
import { passAtK } from '../algorithms/groupFilters';
import type { Trajectory } from '../rollout/engine';
import type { TreeGroupStats } from '../rollout/tree';

/** Canonical metric names (docs/training.md, "Signals"), so producers and readers cannot drift apart. */
export const METRIC = {
  rewardMean: 'reward/mean',
  rewardStdInGroup: 'reward/std_in_group',
  rewardStdInGroupKept: 'reward/std_in_group_kept',
  rewardStdBatch: 'reward/std_batch',
  successRate: 'success/rate',
  passAtK: 'success/pass_at_k',
  entropyMean: 'entropy/mean',
  gradNormActor: 'grad_norm/actor',
  gradNormCritic: 'grad_norm/critic',
  responseLength: 'response/length',
  thinkLength: 'response/think_length',
  distinctRatio: 'diversity/distinct_ratio',
  identicalGroups: 'diversity/identical_groups',
  distinctRatioGlobal: 'diversity/distinct_ratio_global',
  templateShare: 'diversity/template_share',
  lossPolicy: 'loss/policy',
  lossValue: 'loss/value',
  /** Mean cross-entropy (nats per token) of the environment's feedback under the policy: the world-model loss. */
  lossWorldModel: 'loss/world_model',
  clipFractionHigh: 'clip/fraction_high',
  clipFractionLow: 'clip/fraction_low',
  klRef: 'kl/ref',
  /** KL(π_before ‖ π_after) of a step's update per response token (k3): how far one step moved the policy. */
  klUpdate: 'kl/update',
  /** k3 KL between the sampling policy and the policy each minibatch trains, averaged over minibatches: 0 with one minibatch. */
  klMinibatch: 'kl/minibatch',
  /** Optimiser steps the update took (minibatches × epochs). */
  optimiserSteps: 'update/optimiser_steps',
  filterKeptRatio: 'filter/kept_ratio',
  /** GiGPO: share of trained turns whose observation another turn of their group shares (0: GiGPO is GRPO). */
  gigpoAnchoredTurns: 'gigpo/anchored_turns',
  /** Dynamic sampling (DAPO): rollout batches drawn beyond the first this step. */
  dynamicSamplingRounds: 'rollout/dynamic_sampling_rounds',
  /** Dynamic sampling: groups drawn beyond rollout.groups, and their trajectories. */
  extraGroups: 'rollout/extra_groups',
  extraTrajectories: 'rollout/extra_trajectories',
  /** Dynamic sampling: groups short of rollout.groups once its bound was spent (0 when full). */
  dynamicSamplingShortfall: 'rollout/dynamic_sampling_shortfall',
  tokensPerSecond: 'perf/tokens_per_s',
  stepMs: 'perf/step_ms',
  rolloutMs: 'perf/rollout_ms',
  updateMs: 'perf/update_ms',
  formatValid: 'format/valid_rate',
  /** Environments whose actions are tool calls: tool calls per episode, and the share of them the tool ran. */
  toolCallsPerEpisode: 'tools/calls_per_episode',
  toolSuccessRate: 'tools/success_rate',
  episodeTurns: 'episode/turns',
  episodeActions: 'episode/actions',
  explainedVariance: 'value/explained_variance',
  warmupLoss: 'warmup/loss',
  /** Self-imitation: mean cross-entropy of its replayed episodes, the buffer's size, and the successes the step added. */
  selfImitationLoss: 'self_imitation/loss',
  selfImitationBuffer: 'self_imitation/buffer',
  selfImitationAdded: 'self_imitation/added',
  /** Distinct sequences of executed actions per prompt (group): the rollout clusters AEPO counts. */
  distinctActionSequences: 'diversity/distinct_action_sequences',
  /** Tree rollouts: trajectories created by branching, per prompt. */
  branchesPerPrompt: 'rollout/branches_per_prompt',
  /** Tree rollouts: trajectories started from the prompt before any branching (m), per prompt. */
  globalSamples: 'rollout/global_samples',
  /** Tree rollouts: mean normalised segment entropy of responses that followed feedback. */
  entropyAfterFeedback: 'entropy/after_feedback',
  /** Prefix of `rollout/consecutive_branches_<l>`: runs of exactly l branching rounds in a row, per prompt. */
  consecutiveBranchesPrefix: 'rollout/consecutive_branches_',
} as const;

export type Metrics = Record<string, number>;

/**
 * How an evaluation was played, which its series' names say so that two protocols never share a
 * series: `sampled` at the job's evalTemperature (RAGEN's 0.5 by default), `greedy` at 0, and
 * `legacy` the single `eval/*` series of jobs stored before version 2 (greedy unless they set a
 * temperature).
 */
export type EvalProtocol = 'sampled' | 'greedy' | 'legacy';

export const EVAL_METRICS: Readonly<Record<EvalProtocol, { success: string; return: string; formatValid: string }>> = {
  sampled: { success: 'eval/sampled/success', return: 'eval/sampled/return', formatValid: 'eval/sampled/format_valid' },
  greedy: { success: 'eval/greedy/success', return: 'eval/greedy/return', formatValid: 'eval/greedy/format_valid' },
  legacy: { success: 'eval/success', return: 'eval/return', formatValid: 'eval/format_valid' },
};

/** The evaluation success of a step's metrics, if it was evaluated: sampled first, then greedy, then legacy. */
export function evalSuccessOf(metrics: Readonly<Metrics>): number | undefined {
  return metrics[EVAL_METRICS.sampled.success] ?? metrics[EVAL_METRICS.greedy.success] ?? metrics[EVAL_METRICS.legacy.success];
}

/** Trajectories of one step arranged by group (same initial state within a group). */
export function byGroup(trajectories: readonly Trajectory[]): Trajectory[][] {
  const groups = new Map<number, Trajectory[]>();
  for (const t of trajectories) {
    const list = groups.get(t.group) ?? [];
    list.push(t);
    groups.set(t.group, list);
  }
  return [...groups.keys()].sort((a, b) => a - b).map((g) => groups.get(g)!);
}

/** The whole response text of a trajectory, turn by turn: what "identical responses" compares. */
export function responseSignature(trajectory: Trajectory): string {
  return trajectory.turns.map((turn) => turn.text).join(' ⏎ ');
}

/**
 * Rollout signals of one step (docs/training.md, "Signals"): rewards and in-group reward std before and after
 * filtering, success and pass@k, token entropy, response lengths, diversity within groups.
 */
export function rolloutMetrics(groups: readonly Trajectory[][], keptGroups: readonly number[], thinkTokenIds: { open: number; close: number }): Metrics {
  const all = groups.flat();
  const stds = groups.map((g) => unbiasedStd(g.map((t) => t.return)));
  const turns = all.flatMap((t) => t.turns);
  const entropies = turns.flatMap((turn) => turn.response.entropies);
  const distinct = groups.map((g) => new Set(g.map(responseSignature)).size);
  return {
    [METRIC.rewardMean]: mean(all.map((t) => t.return)),
    [METRIC.rewardStdInGroup]: mean(stds),
    [METRIC.rewardStdInGroupKept]: mean(keptGroups.map((g) => stds[g])),
    [METRIC.rewardStdBatch]: unbiasedStd(all.map((t) => t.return)),
    [METRIC.successRate]: mean(all.map((t) => (t.success ? 1 : 0))),
    [METRIC.passAtK]: passAtK(groups.map((g) => g.map((t) => t.success))),
    [METRIC.entropyMean]: mean(entropies),
    [METRIC.responseLength]: mean(turns.map((turn) => turn.response.tokens.length)),
    [METRIC.thinkLength]: mean(turns.map((turn) => thinkLength(turn.response.tokens, thinkTokenIds))),
    [METRIC.distinctRatio]: mean(distinct.map((d, i) => d / groups[i].length)),
    [METRIC.identicalGroups]: mean(distinct.map((d, i) => (d === 1 && groups[i].length > 1 ? 1 : 0))),
    [METRIC.distinctRatioGlobal]: new Set(all.map(responseSignature)).size / Math.max(all.length, 1),
    [METRIC.templateShare]: templateShare(groups),
    [METRIC.filterKeptRatio]: keptGroups.length / Math.max(groups.length, 1),
    [METRIC.formatValid]: mean(turns.map((turn) => (turn.penalised ? 0 : 1))),
    [METRIC.episodeTurns]: mean(all.map((t) => t.turns.length)),
    [METRIC.episodeActions]: mean(all.map((t) => t.actionCount)),
    [METRIC.distinctActionSequences]: mean(groups.map((g) => new Set(g.map(actionSequence)).size)),
  };
}

/** The actions a trajectory executed, in order (what tells two rollouts' behaviour apart). */
export function actionSequence(trajectory: Trajectory): string {
  return trajectory.turns.map((turn) => turn.executed.join(' ')).join(' | ');
}

/**
 * Tree-rollout signals of one step, per prompt: branches, global samples, entropy after feedback,
 * and `rollout/consecutive_branches_<l>` for l = 1..`longestRun`: runs of exactly l branching
 * rounds in a row, the last series counting runs of `longestRun` or more. Every series is present
 * each step (zero when no such run occurred), so each is a continuous curve.
 */
export function treeMetrics(groups: readonly TreeGroupStats[], longestRun: number): Metrics {
  const afterFeedback = groups.flatMap((g) => g.afterFeedbackEntropies);
  const metrics: Metrics = {
    [METRIC.branchesPerPrompt]: mean(groups.map((g) => g.branches)),
    [METRIC.globalSamples]: mean(groups.map((g) => g.globalSamples)),
    [METRIC.entropyAfterFeedback]: afterFeedback.length > 0 ? mean(afterFeedback) : 0,
  };
  for (let l = 1; l <= longestRun; l++) {
    const counted = (run: number) => run === l || (l === longestRun && run > l);
    metrics[`${METRIC.consecutiveBranchesPrefix}${l}`] = mean(groups.map((g) => g.branchRuns.filter(counted).length));
  }
  return metrics;
}

/**
 * The Echo Trap's signature across states: the largest share of initial states (groups) whose
 * first response contains one and the same text. 1/groups when every state gets its own
 * answer; 1 when a single response is given whatever the state.
 */
export function templateShare(groups: readonly Trajectory[][]): number {
  const statesByText = new Map<string, Set<number>>();
  groups.forEach((group, g) => {
    for (const trajectory of group) {
      const text = trajectory.turns[0]?.text;
      if (text === undefined) continue;
      const states = statesByText.get(text) ?? new Set<number>();
      states.add(g);
      statesByText.set(text, states);
    }
  });
  let widest = 0;
  for (const states of statesByText.values()) widest = Math.max(widest, states.size);
  return widest / Math.max(groups.length, 1);
}

/** Tokens strictly between <think> and </think> (0 when there is no complete think block). */
function thinkLength(tokens: readonly number[], ids: { open: number; close: number }): number {
  const open = tokens.indexOf(ids.open);
  const close = tokens.indexOf(ids.close, open + 1);
  return open >= 0 && close > open ? close - open - 1 : 0;
}

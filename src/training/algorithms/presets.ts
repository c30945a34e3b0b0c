import { Static, Type } from '@sinclair/typebox';

const num = (minimum: number, maximum: number, description: string) => Type.Number({ minimum, maximum, description });
const int = (minimum: number, maximum: number, description: string) => Type.Integer({ minimum, maximum, description });

/**
 * Every knob of the StarPO family in one flat config; the algorithm ids are presets over it
 * (docs/training.md, "Algorithms") and any value can be overridden in the job spec's
 * `algorithm.config`.
 */
export const AlgorithmConfigSchema = Type.Object(
  {
    advantage: Type.Union([Type.Literal('gae'), Type.Literal('grpo'), Type.Literal('gigpo')], {
      description: 'gae: PPO critic with GAE; grpo: per-group z-score of returns, no critic; gigpo: GRPO episode advantage plus ω × step advantage within identical-observation anchor groups, no critic',
    }),
    gigpoStepWeight: num(0, 10, 'GiGPO ω: weight of the step advantage in A = A_episode + ω·A_step'),
    gigpoGamma: num(0, 1, 'GiGPO discount of the per-turn step returns the anchor groups compare'),
    gigpoNormalization: Type.Union([Type.Literal('mean-std'), Type.Literal('mean')], {
      description: "GiGPO: 'mean-std' divides episode and step advantages by their group's std, 'mean' only centres them",
    }),
    gamma: num(0, 1, 'GAE discount over assistant tokens'),
    lambda: num(0, 1, 'GAE λ'),
    whitenAdvantages: Type.Boolean({ description: 'whiten GAE advantages over the batch' }),
    rewardAssignment: Type.Union([Type.Literal('trajectory'), Type.Literal('turn')], {
      description: 'trajectory: the return on the last token (RAGEN); turn: each turn reward on its last token',
    }),
    clipLow: num(0, 1, 'PPO ε_low: ratio floor 1 − ε_low'),
    clipHigh: num(0, 2, 'PPO ε_high: ratio ceiling 1 + ε_high (clip-higher when > clipLow)'),
    dualClip: num(0, 100, 'dual-clip constant c for negative advantages; 0 disables'),
    clipMode: Type.Union([Type.Literal('ppo'), Type.Literal('aepo')], {
      description: "ppo: hard clip; aepo: AEPO's entropy clipping-balanced loss, same value as PPO but a token above 1 + ε_high keeps the gradient (1 + ε_high)·A·∇log π",
    }),
    entropyAdvantageAlpha: num(0, 10, "AEPO's entropy-aware advantage A' = A·(1 + α·sg(Ĥ)), Ĥ the token entropy standardised over the minibatch's loss tokens; 0 disables"),
    entropyCoef: num(0, 1, 'entropy bonus coefficient'),
    klCoef: num(0, 1, 'coefficient of the k1 KL penalty to the frozen warm-up policy; 0 disables'),
    valueClip: num(0, 100, 'value-loss clipping range around the old values'),
    valueCoef: num(0, 100, 'scale of the critic loss'),
    criticLearningRateScale: num(0.01, 100, 'critic learning rate as a multiple of training.learningRate'),
    weightDecay: num(0, 1, 'decoupled weight decay λ of AdamW, actor and critic (0: Adam)'),
    filter: Type.Union([Type.Literal('none'), Type.Literal('std-top')], {
      description: 'std-top: StarPO-S variance filter keeping the groups with the highest in-group reward std',
    }),
    filterKeepFraction: num(0.01, 1, 'share of groups kept by the std-top filter'),
    dynamicSampling: Type.Boolean({
      description: 'DAPO dynamic sampling: drop groups whose returns are all equal and sample more groups until rollout.groups are kept, within dynamicSamplingMaxBatches',
    }),
    dynamicSamplingMaxBatches: int(1, 32, 'dynamic sampling: most rollout batches (of rollout.groups groups each, the first included) one step may draw; when spent, the step trains on what it kept'),
    lossAggregation: Type.Union([Type.Literal('seq-mean-token-mean'), Type.Literal('token-mean')], {
      description: 'token-mean per trajectory then mean over trajectories, or mean over all tokens',
    }),
    epochs: int(1, 4, 'PPO epochs over each batch of fresh rollouts'),
    miniBatchSize: int(1, 256, 'trajectories per minibatch, each one optimiser step; a remainder makes a last, smaller one'),
    miniBatches: Type.Optional(int(1, 32, 'minibatches per epoch, instead of miniBatchSize (how jobs submitted before miniBatchSize were split)')),
    maxGradNorm: num(0.01, 100, 'global gradient-norm clip (the pre-clip norm is reported)'),
    worldModelCoef: num(0, 10, "weight of a self-supervised world-model loss: predicting what the environment wrote after each response (reward, next observation), on the agent's own rollouts; 0 disables"),
    selfImitationSteps: int(0, 64, "self-imitation: supervised steps on the agent's own successful training episodes after each RL update (a first-in first-out buffer); 0 disables"),
    selfImitationBatchSize: int(1, 256, 'self-imitation: episodes per supervised step, drawn from the buffer with replacement'),
    selfImitationBufferSize: int(1, 4096, 'self-imitation: successful episodes the buffer keeps, the oldest evicted first'),
    selfImitationLearningRate: num(1e-6, 0.1, 'self-imitation: learning rate of its own Adam (scaled by the learning-rate schedule like the actor)'),
    selfImitationSelect: Type.Union([Type.Literal('all'), Type.Literal('shortest'), Type.Literal('advantage')], {
      description:
        "self-imitation: which successful episodes join the buffer and how often they are replayed: all, equally; shortest: in each group (one initial state) only those with the group's fewest actions; advantage: each weighted by 1 − its group's success rate (SIL's (R − V)+), a group that always succeeded left out",
    }),
    // Tree rollouts (docs/training.md, "Tree rollouts"); every knob follows ARPO's and AEPO's rollout code.
    rollout: Type.Union([Type.Literal('independent'), Type.Literal('arpo'), Type.Literal('aepo')], {
      description: "independent: groupSize rollouts from each initial state; arpo: branch after feedback by ARPO's ΔH rule; aepo: entropy pre-monitoring sets the global samples, branching damped by consecutive branches",
    }),
    branchThreshold: num(0, 1, 'τ of the branch rule (ARPO branches iff clip(u − w·ΔH) ≤ τ, AEPO iff clip((u + w·ΔH)·max(0, 1 − penalty·l)) ≥ τ)'),
    branchEntropyWeight: num(0, 10, 'w: weight of the entropy change ΔH in the branch rule'),
    branchPenalty: num(0, 1, "AEPO's consecutive-branch penalty per branching round in a row (0.05 in its code); ARPO has none"),
    branchInitialShare: num(0, 1, 'share of groupSize started from the initial state before branching (ARPO: 8 of 16 in its scripts; AEPO without pre-monitoring: 6 of 12)'),
    branchesPerDecision: int(1, 8, 'copies one path may spawn after one feedback (beam_size − 1 in the codes; their scripts: 1)'),
    entropyTokens: int(1, 256, 'positions of a response its entropy is taken over, summed and divided by ln |V| (20 in the codes)'),
    entropyPreMonitoring: Type.Boolean({
      description: "AEPO: set the global samples m by entropy pre-monitoring (two discarded probes); false starts branchInitialShare of groupSize from the prompt, as AEPO's released scripts do (ENABLE_DYNAMIC_ROLLOUTS=False)",
    }),
    entropyMonitorBeta: num(0, 10, "β of AEPO's pre-monitoring m = clamp(⌊k·σ(β·(H_root − H̄_tool))⌋ + 1, 1, k) (0.5 in its code)"),
  },
  { additionalProperties: false },
);
export type AlgorithmConfig = Static<typeof AlgorithmConfigSchema>;

const STARPO_BASE: AlgorithmConfig = {
  advantage: 'gae',
  gamma: 1,
  lambda: 1,
  gigpoStepWeight: 1,
  gigpoGamma: 0.95,
  gigpoNormalization: 'mean-std',
  whitenAdvantages: true,
  rewardAssignment: 'trajectory',
  clipLow: 0.2,
  clipHigh: 0.2,
  dualClip: 3,
  clipMode: 'ppo',
  entropyAdvantageAlpha: 0,
  entropyCoef: 0.001,
  klCoef: 0,
  valueClip: 0.5,
  valueCoef: 1,
  criticLearningRateScale: 10,
  weightDecay: 0.01,
  filter: 'none',
  filterKeepFraction: 1,
  dynamicSampling: false,
  dynamicSamplingMaxBatches: 10,
  lossAggregation: 'seq-mean-token-mean',
  epochs: 1,
  miniBatchSize: 32,
  maxGradNorm: 1,
  worldModelCoef: 0,
  selfImitationSteps: 0,
  selfImitationBatchSize: 32,
  selfImitationBufferSize: 512,
  selfImitationLearningRate: 1e-3,
  selfImitationSelect: 'all',
  rollout: 'independent',
  branchThreshold: 0.5,
  branchEntropyWeight: 0.2,
  branchPenalty: 0.05,
  branchInitialShare: 0.5,
  branchesPerDecision: 1,
  entropyTokens: 20,
  entropyPreMonitoring: true,
  entropyMonitorBeta: 0.5,
};

/** StarPO-S: variance filter (top 25%), clip-higher 0.2/0.28, no KL (RAGEN §4). */
const STARPO_S: Partial<AlgorithmConfig> = { filter: 'std-top', filterKeepFraction: 0.25, clipHigh: 0.28, klCoef: 0 };
/** RAGEN's GRPO runs keep veRL's k1 KL loss at 0.001; its PPO runs have none. */
const GRPO: Partial<AlgorithmConfig> = { advantage: 'grpo', whitenAdvantages: false, klCoef: 0.001 };

/**
 * DAPO (Yu et al. 2025) as its released recipe runs it: GRPO advantages, clip-higher 0.2/0.28,
 * token-mean loss over the minibatch, no KL and no entropy bonus, dual clip c = 10, and dynamic
 * sampling bounded at 10 generation batches per step (`max_num_gen_batches`).
 */
const DAPO: Partial<AlgorithmConfig> = {
  ...GRPO,
  klCoef: 0,
  entropyCoef: 0,
  clipHigh: 0.28,
  dualClip: 10,
  lossAggregation: 'token-mean',
  dynamicSampling: true,
  dynamicSamplingMaxBatches: 10,
};
/**
 * GiGPO (Feng et al. 2025) as verl-agent's scripts run it: γ = 0.95 step returns, ω = 1, mean-std
 * normalisation, token-mean loss, symmetric clip 0.2, a KL loss of 0.01 to the reference.
 */
const GIGPO: Partial<AlgorithmConfig> = {
  advantage: 'gigpo',
  whitenAdvantages: false,
  gigpoStepWeight: 1,
  gigpoGamma: 0.95,
  gigpoNormalization: 'mean-std',
  lossAggregation: 'token-mean',
  klCoef: 0.01,
};

/**
 * ARPO's released training setup: GRPO advantages, no KL (coefficient 0), no entropy bonus,
 * clip 0.2/0.2 with dual clip 3, token-mean loss, one epoch in minibatches of 1/8 of the batch
 * (16 of 128 prompts; 16 of the default 8×16 trajectories here), 16 rollouts per prompt.
 */
const ARPO: Partial<AlgorithmConfig> = {
  ...GRPO,
  klCoef: 0,
  entropyCoef: 0,
  lossAggregation: 'token-mean',
  miniBatchSize: 16,
  rollout: 'arpo',
};

/**
 * RAGEN's runs as presets (its base config over veRL): one epoch over fresh rollouts in
 * minibatches of 32 trajectories (4 optimiser steps on 8×16 rollouts, 1 after StarPO-S's filter),
 * γ = λ = 1, dual clip 3, entropy bonus 0.001, AdamW with weight decay 0.01 and the critic at 10×
 * the actor's learning rate.
 */
export const ALGORITHM_PRESETS = {
  'starpo-ppo': { description: 'StarPO with a PPO critic (GAE), no filtering, no KL (RAGEN’s PPO runs)', config: { ...STARPO_BASE } },
  'starpo-grpo': { description: 'StarPO with GRPO group normalisation, no critic, k1 KL 0.001 (RAGEN’s GRPO runs)', config: { ...STARPO_BASE, ...GRPO } },
  'starpo-s': { description: 'StarPO-S: std filter top 25%, PPO critic, clip-higher 0.2/0.28, no KL', config: { ...STARPO_BASE, ...STARPO_S } },
  'starpo-s-grpo': { description: 'StarPO-S with GRPO advantages instead of a critic, no KL', config: { ...STARPO_BASE, ...GRPO, ...STARPO_S } },
  dapo: {
    description:
      'DAPO: GRPO advantages, clip-higher 0.2/0.28, token-mean loss, no KL, dynamic sampling (groups whose returns are all equal are dropped and more are sampled). ' +
      'Follows the released recipe where it differs from the paper: at most 10 rollout batches per step (the paper samples until the batch is full), dual clip 10, no entropy bonus; ' +
      'when the bound is spent the step trains on the groups it kept (the code stops with an error). Overlong reward shaping is not included.',
    config: { ...STARPO_BASE, ...DAPO },
  },
  gigpo: {
    description:
      'GiGPO: GRPO episode advantage plus ω = 1 times a step advantage from anchor groups of identical observations across a group’s rollouts (γ = 0.95 step returns), no critic. ' +
      'Follows verl-agent’s scripts: mean-std normalisation, token-mean loss, clip 0.2, KL loss 0.01 (k1 here, the code’s k3); ' +
      'a step whose observation no other step shares gets step advantage 0 (the code gives it its raw return).',
    config: { ...STARPO_BASE, ...GIGPO },
  },
  arpo: {
    description:
      "ARPO: tree rollouts that branch after feedback, GRPO advantages, no KL, token-mean loss. Following ARPO's code: half of k started from the prompt, branch iff clip(u − 0.2·ΔH, 0, 1) ≤ 0.5 with ΔH the change of a path's segment entropy (first 20 tokens, summed, / ln|V|) since its first segment, one copy per decision, no consecutive-branch penalty. The paper's α + β·ΔH rule branches with the same probability at τ = 0.5",
    config: { ...STARPO_BASE, ...ARPO },
  },
  aepo: {
    description:
      "AEPO's tree rollouts with GRPO advantages, no KL, token-mean loss. Following AEPO's code: two discarded probes set m = clamp(⌊k·σ(0.5·(H_root − H̄_tool))⌋ + 1, 1, k) global samples, and a path branches iff clip((u + 0.2·ΔH)·max(0, 1 − 0.05·l), 0, 1) ≥ 0.5, l the prompt's branching rounds in a row. Pre-monitoring is on, as the paper describes; AEPO's released script turns it off (entropyPreMonitoring: false restores that). " +
      "The update is AEPO's: the entropy clipping-balanced loss in stop-gradient form (clipMode aepo: tokens above the upper clip keep the gradient (1+ε_h)·A·∇log π) and the entropy-aware advantage A·(1 + α·sg(Ĥ)) with α = 0.3 as the paper reports (the code hard-codes 0.2 and its scripts skip the term), in minibatches of 16 so the ratio moves off 1",
    config: { ...STARPO_BASE, ...ARPO, rollout: 'aepo', clipMode: 'aepo', entropyAdvantageAlpha: 0.3 },
  },
} satisfies Record<string, { description: string; config: AlgorithmConfig }>;

export type AlgorithmId = keyof typeof ALGORITHM_PRESETS;
export const ALGORITHM_IDS = Object.keys(ALGORITHM_PRESETS) as AlgorithmId[];

export function usesCritic(config: AlgorithmConfig): boolean {
  return config.advantage === 'gae';
}

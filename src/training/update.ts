import * as tf from '@tensorflow/tfjs';
import { entropyShapedAdvantages } from './algorithms/advantages';
import { explainedVariance } from './algorithms/grad';
import { aggregationWeights, clippedValueLoss, k3, klK1, ppoPolicyLoss, tokenEntropy, tokenLogProbs, weightedTokenSum } from './algorithms/losses';
import type { AlgorithmConfig } from './algorithms/presets';
import { mean } from './algorithms/stats';
import { Adam } from './policy/adam';
import { PackedBatch } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import type { Trajectory } from './rollout/engine';
import { METRIC, Metrics } from './signals/step-metrics';
import { ACTIVATION_BUDGET_FLOATS, accumulatedStep } from './accumulate';
import { UpdateRow, assignCriticValues, responseValues, assignGae, assignGigpo, assignGroupZScores, buildRows, minibatches } from './update-rows';

/** The networks and optimisers one update touches. */
export interface Learner {
  actor: TransformerLM;
  actorOptimizer: Adam;
  critic: TransformerLM | null;
  criticOptimizer: Adam | null;
  /** Frozen warm-up policy for the KL penalty; null when klCoef is 0. */
  reference: TransformerLM | null;
  /** The actor's second optimiser, for self-imitation steps; absent when they are off. */
  imitationOptimizer?: Adam | null;
}

/** Rows `policyShift` measures at most: the step's size, not a per-row account. */
const SHIFT_SAMPLE_ROWS = 256;

/**
 * The StarPO update for one step's kept groups: advantages (GAE with a critic, or GRPO group
 * z-scores, or GiGPO's episode plus step advantages), then for each epoch and minibatch a critic
 * step (clipped value loss) and an actor step (PPO or AEPO clip with ε_low/ε_high and dual clip,
 * AEPO's entropy-aware advantages when α > 0, entropy bonus, k1 KL to the reference), each
 * with global-norm clipping. The old log-probabilities are those the rollout sampled with, so
 * from the second minibatch on the ratio moves off 1 and the clip acts. A minibatch is cut into
 * chunks that fit the activation budget and their gradients are summed before the one optimiser
 * step, which equals the whole minibatch's gradient (the aggregation weights are the
 * minibatch's). `budget` (floats per chunk) is for tests and benches. Returns the update's metrics.
 */
export function updatePolicy(
  learner: Learner,
  groups: readonly Trajectory[][],
  config: AlgorithmConfig,
  temperature: number,
  rng: Rng,
  budget = ACTIVATION_BUDGET_FLOATS,
): Metrics {
  const trajectories = groups.flat();
  const rows = buildRows(trajectories);
  if (rows.length === 0) return { [METRIC.optimiserSteps]: 0 };
  const metrics: Metrics = {};
  if (config.advantage === 'gae') {
    if (!learner.critic) throw new Error('GAE needs a critic');
    assignCriticValues(learner.critic, rows, budget);
    assignGae(rows, trajectories, config);
    metrics[METRIC.explainedVariance] = explainedVariance(rows.flatMap((r) => r.oldValues), rows.flatMap((r) => r.returns));
  } else if (config.advantage === 'gigpo') {
    metrics[METRIC.gigpoAnchoredTurns] = assignGigpo(rows, groups, config);
  } else {
    assignGroupZScores(rows, groups);
  }
  // The reference is frozen during the update, so its log-probabilities are the same in every
  // epoch: one forward pass a step instead of one an epoch (a quarter of the largest job's).
  const refLogProbs = learner.reference ? responseLogProbs(learner.reference, rows, temperature, budget) : null;
  const totals: Record<string, number[]> = {};
  const record = (step: Metrics) => Object.entries(step).forEach(([name, value]) => (totals[name] ??= []).push(value));
  let optimiserSteps = 0;
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    for (const minibatch of minibatches(trajectories.length, config, rng)) {
      const members = new Set(minibatch);
      const batchRows = rows.filter((r) => members.has(r.trajectory));
      if (batchRows.length === 0) continue;
      const weights = weightsByRow(batchRows, config);
      if (learner.critic && learner.criticOptimizer) record(criticStep(learner.critic, learner.criticOptimizer, batchRows, weights, config, budget));
      const advantages = config.entropyAdvantageAlpha > 0 ? entropyAwareRows(learner.actor, batchRows, config.entropyAdvantageAlpha, temperature, budget) : advantagesOf(batchRows);
      record(actorStep(learner, batchRows, weights, advantages, refLogProbs, config, temperature, budget));
      optimiserSteps++;
    }
  }
  for (const [name, values] of Object.entries(totals)) metrics[name] = mean(values);
  metrics[METRIC.optimiserSteps] = optimiserSteps;
  metrics[METRIC.klUpdate] = policyShift(learner.actor, rows, temperature, budget);
  return metrics;
}

function advantagesOf(rows: readonly UpdateRow[]): Map<UpdateRow, number[]> {
  return new Map(rows.map((row) => [row, row.advantages]));
}

/**
 * AEPO's entropy-aware advantages of a minibatch, A' = A·(1 + α·sg(Ĥ)): the entropies are the
 * policy's own just before this minibatch's step, at the sampling temperature, standardised over
 * the minibatch's loss tokens. Taking them in a forward pass of their own (no gradient) keeps the
 * standardisation the minibatch's whatever its chunks, and sg() holds by construction.
 */
function entropyAwareRows(actor: TransformerLM, rows: readonly UpdateRow[], alpha: number, temperature: number, budget: number): Map<UpdateRow, number[]> {
  const entropies = responseValues(actor, rows, budget, (out) => tokenEntropy(out.logits, temperature));
  const shaped = entropyShapedAdvantages(rows.map((r) => r.advantages), rows.map((r) => entropies.get(r)!), alpha);
  return new Map(rows.map((row, i) => [row, shaped[i]]));
}

/** `model`'s log-probabilities of every row's response tokens at `temperature`, without gradients. */
function responseLogProbs(model: TransformerLM, rows: readonly UpdateRow[], temperature: number, budget: number): Map<UpdateRow, number[]> {
  return responseValues(model, rows, budget, (out, batch) => tokenLogProbs(out.logits, batch.targetOneHot(model.config.vocabSize), temperature));
}

/**
 * World-model weights of a minibatch: coef / (its feedback tokens) on every feedback token, so the
 * loss is coef × the mean cross-entropy of what the environment wrote after each response.
 */
function worldModelWeights(rows: readonly UpdateRow[], coef: number): number[][] {
  const total = rows.reduce((n, r) => n + r.feedbackIndex.length, 0);
  return rows.map((r) => r.feedbackIndex.map(() => (total > 0 ? coef / total : 0)));
}

/** Aggregation weights of a minibatch, keyed by row so that any chunk of it can take its share. */
function weightsByRow(rows: readonly UpdateRow[], config: AlgorithmConfig): Map<UpdateRow, number[]> {
  const mask = rows.map((r) => r.responseIndex.map(() => 1));
  const weights = aggregationWeights(mask, rows.map((r) => r.trajectory), config.lossAggregation);
  return new Map(rows.map((row, i) => [row, weights[i]]));
}

/** Chunk weights as a [B, T] tensor laid out like the chunk's batch. */
function chunkWeights(batch: PackedBatch, chunk: readonly UpdateRow[], weights: Map<UpdateRow, number[]>): tf.Tensor2D {
  return batch.perToken(chunk.map((row) => weights.get(row)!));
}

/** Reads kept scalars back and disposes them; per-chunk shares are combined by `combine`. */
function readKept(kept: tf.Scalar[][]): number[][] {
  const values = kept.map((scalars) => scalars.map((t) => t.dataSync()[0]));
  tf.dispose(kept.flat());
  return values;
}

function criticStep(critic: TransformerLM, optimizer: Adam, rows: readonly UpdateRow[], weights: Map<UpdateRow, number[]>, config: AlgorithmConfig, budget: number): Metrics {
  const kept: tf.Scalar[][] = [];
  const norm = accumulatedStep(critic, optimizer, rows, config.maxGradNorm, budget, (batch, chunk) => {
    const inputs = batch.inputTensor();
    const oldValues = batch.perToken(chunk.map((r) => r.oldValues));
    const returns = batch.perToken(chunk.map((r) => r.returns));
    const w = chunkWeights(batch, chunk, weights);
    return () => {
      const { values } = critic.forward(inputs);
      const loss = tf.mul(clippedValueLoss({ values, oldValues, returns, weights: w, clip: config.valueClip }), config.valueCoef) as tf.Scalar;
      kept.push([tf.keep(loss.clone())]);
      return loss;
    };
  });
  const losses = readKept(kept);
  return { [METRIC.lossValue]: losses.reduce((sum, [v]) => sum + v, 0), [METRIC.gradNormCritic]: norm };
}

function actorStep(
  learner: Learner,
  rows: readonly UpdateRow[],
  weights: Map<UpdateRow, number[]>,
  advantagesByRow: Map<UpdateRow, number[]>,
  refByRow: Map<UpdateRow, number[]> | null,
  config: AlgorithmConfig,
  temperature: number,
  budget: number,
): Metrics {
  const { actor } = learner;
  const kept: tf.Scalar[][] = [];
  const counted: number[] = [];
  const wmWeights = config.worldModelCoef > 0 ? worldModelWeights(rows, config.worldModelCoef) : null;
  const worldModel = wmWeights ? new Map(rows.map((row, i) => [row, wmWeights[i]])) : null;
  const worldModelLosses: tf.Scalar[] = [];
  const norm = accumulatedStep(actor, learner.actorOptimizer, rows, config.maxGradNorm, budget, (batch, chunk) => {
    const inputs = batch.inputTensor();
    const targets = batch.targetOneHot(actor.config.vocabSize);
    const oldLogProbs = batch.perToken(chunk.map((r) => r.oldLogProbs));
    const advantages = batch.perToken(chunk.map((r) => advantagesByRow.get(r)!));
    const w = chunkWeights(batch, chunk, weights);
    const refLogProbs = refByRow ? batch.perToken(chunk.map((r) => refByRow.get(r)!)) : null;
    const wm = worldModel ? batch.atTokens(chunk.map((r) => r.feedbackIndex), chunk.map((r) => worldModel.get(r)!)) : null;
    counted.push(chunk.reduce((n, r) => n + r.responseIndex.length, 0));
    return () => {
      const { logits } = actor.forward(inputs);
      const logProbs = tokenLogProbs(logits, targets, temperature);
      const policy = ppoPolicyLoss({
        logProbs,
        oldLogProbs,
        advantages,
        weights: w,
        clipLow: config.clipLow,
        clipHigh: config.clipHigh,
        dualClip: config.dualClip > 1 ? config.dualClip : null,
        mode: config.clipMode,
      });
      let loss: tf.Scalar = policy.loss;
      if (config.entropyCoef > 0) loss = tf.sub(loss, tf.mul(weightedTokenSum(tokenEntropy(logits, temperature), w), config.entropyCoef));
      const scalars = [policy.loss, policy.clipFractionHigh, policy.clipFractionLow, policy.approxKl];
      if (refLogProbs) {
        const kl = klK1({ logProbs, refLogProbs, weights: w });
        scalars.push(kl);
        if (config.klCoef > 0) loss = tf.add(loss, tf.mul(kl, config.klCoef));
      }
      if (wm) {
        // The environment's own distribution, not the sampling temperature's.
        const predicted = tf.neg(weightedTokenSum(tokenLogProbs(logits, targets, 1), wm)) as tf.Scalar;
        worldModelLosses.push(tf.keep(predicted.clone()));
        loss = tf.add(loss, predicted);
      }
      kept.push(scalars.map((t) => tf.keep(t.clone())));
      return loss;
    };
  });
  const values = readKept(kept);
  // Loss and KL are Σ w·ℓ and add up over chunks; clip fractions are shares of each chunk's tokens.
  const total = (i: number) => values.reduce((sum, v) => sum + v[i], 0);
  const share = (i: number) => values.reduce((sum, v, c) => sum + v[i] * counted[c], 0) / Math.max(1, counted.reduce((a, b) => a + b, 0));
  const metrics: Metrics = {
    [METRIC.lossPolicy]: total(0),
    [METRIC.clipFractionHigh]: share(1),
    [METRIC.clipFractionLow]: share(2),
    [METRIC.klMinibatch]: total(3),
    [METRIC.gradNormActor]: norm,
  };
  if (refByRow) metrics[METRIC.klRef] = total(4);
  if (worldModel) {
    const sum = worldModelLosses.reduce((a, t) => a + t.dataSync()[0], 0);
    tf.dispose(worldModelLosses);
    metrics[METRIC.lossWorldModel] = sum / config.worldModelCoef;
  }
  return metrics;
}

/**
 * KL(π_before ‖ π_after) of this step's whole update, per response token (k3 estimator on the
 * step's own samples, which π_before drew): how far one step moved the policy, whatever the
 * number of minibatches.
 */
function policyShift(actor: TransformerLM, rows: UpdateRow[], temperature: number, budget: number): number {
  const stride = Math.ceil(rows.length / SHIFT_SAMPLE_ROWS);
  const sample = rows.filter((_, i) => i % stride === 0);
  const shifts: number[] = [];
  for (const [row, after] of responseLogProbs(actor, sample, temperature, budget)) after.forEach((logProb, j) => shifts.push(k3(logProb - row.oldLogProbs[j])));
  return shifts.length > 0 ? mean(shifts) : 0;
}

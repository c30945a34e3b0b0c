import * as tf from '@tensorflow/tfjs';
import { gae, groupZScores, whiten } from './algorithms/advantages';
import { explainedVariance } from './algorithms/grad';
import { aggregationWeights, clippedValueLoss, k3, klK1, ppoPolicyLoss, tokenEntropy, tokenLogProbs, weightedTokenSum } from './algorithms/losses';
import type { AlgorithmConfig } from './algorithms/presets';
import { mean } from './algorithms/stats';
import { Adam } from './policy/adam';
import { PackedBatch, SequenceRow } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import type { Trajectory } from './rollout/engine';
import { METRIC, Metrics } from './signals/step-metrics';
import { applyClipped } from './warmup';

/** The networks and optimisers one update touches. */
export interface Learner {
  actor: TransformerLM;
  actorOptimizer: Adam;
  critic: TransformerLM | null;
  criticOptimizer: Adam | null;
  /** Frozen warm-up policy for the KL penalty; null when klCoef is 0. */
  reference: TransformerLM | null;
}

/** One turn of a kept trajectory with its per-token training targets. */
interface UpdateRow extends SequenceRow {
  trajectory: number;
  oldLogProbs: number[];
  advantages: number[];
  returns: number[];
  oldValues: number[];
}

/** Rows per forward pass when only evaluating (critic values before the update). */
const EVAL_CHUNK_ROWS = 256;

/**
 * The StarPO update for one step's kept groups: advantages (GAE with a critic, or GRPO group
 * z-scores), then for each epoch and minibatch a critic step (clipped value loss) and an actor
 * step (PPO clip with ε_low/ε_high and dual clip, entropy bonus, k1 KL to the reference), each
 * with global-norm clipping. Returns the update's metrics.
 */
export function updatePolicy(learner: Learner, groups: readonly Trajectory[][], config: AlgorithmConfig, temperature: number, rng: Rng): Metrics {
  const trajectories = groups.flat();
  const rows = buildRows(trajectories);
  if (rows.length === 0) return {};
  const metrics: Metrics = {};
  if (config.advantage === 'gae') {
    if (!learner.critic) throw new Error('GAE needs a critic');
    assignCriticValues(learner.critic, rows);
    assignGae(rows, trajectories, config);
    metrics[METRIC.explainedVariance] = explainedVariance(rows.flatMap((r) => r.oldValues), rows.flatMap((r) => r.returns));
  } else {
    assignGroupZScores(rows, groups);
  }
  const totals: Record<string, number[]> = {};
  const record = (name: string, value: number) => (totals[name] ??= []).push(value);
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    for (const minibatch of minibatches(trajectories.length, config.miniBatches, rng)) {
      const members = new Set(minibatch);
      const batchRows = rows.filter((r) => members.has(r.trajectory));
      const batch = new PackedBatch(batchRows);
      const weights = aggregationWeights(batch.responseMask(), batchRows.map((r) => r.trajectory), config.lossAggregation);
      if (learner.critic && learner.criticOptimizer) {
        for (const [name, value] of Object.entries(criticStep(learner.critic, learner.criticOptimizer, batch, batchRows, weights, config))) record(name, value);
      }
      for (const [name, value] of Object.entries(actorStep(learner, batch, batchRows, weights, config, temperature))) record(name, value);
    }
  }
  for (const [name, values] of Object.entries(totals)) metrics[name] = mean(values);
  metrics[METRIC.klUpdate] = policyShift(learner.actor, rows, temperature);
  return metrics;
}

/**
 * KL(π_before ‖ π_after) of this step's whole update, per response token (k3 estimator on the
 * step's own samples, which π_before drew): how far one step moved the policy. Measured after
 * the update rather than inside it, because with one minibatch (the presets' default) the PPO
 * ratio is exactly 1 while the loss is computed and says nothing about the step's size.
 */
function policyShift(actor: TransformerLM, rows: UpdateRow[], temperature: number): number {
  // Every stride-th row, at most one evaluation chunk: the step's size, not a per-row account.
  const stride = Math.ceil(rows.length / EVAL_CHUNK_ROWS);
  const sample = rows.filter((_, i) => i % stride === 0);
  const batch = new PackedBatch(sample);
  const logProbs = tf.tidy(() => tokenLogProbs(actor.forward(batch.inputTensor()).logits, batch.targetOneHot(actor.config.vocabSize), temperature));
  const shifts = batch.gatherResponse(logProbs).flatMap((after, i) => after.map((logProb, j) => k3(logProb - sample[i].oldLogProbs[j])));
  logProbs.dispose();
  return shifts.length > 0 ? mean(shifts) : 0;
}

function buildRows(trajectories: readonly Trajectory[]): UpdateRow[] {
  return trajectories.flatMap((t, index) =>
    t.turns
      .filter((turn) => turn.response.tokens.length > 0)
      .map((turn) => ({
        context: turn.context,
        response: turn.response.tokens,
        trajectory: index,
        oldLogProbs: turn.response.logProbs,
        advantages: [],
        returns: [],
        oldValues: [],
      })),
  );
}

function assignCriticValues(critic: TransformerLM, rows: UpdateRow[]): void {
  for (let start = 0; start < rows.length; start += EVAL_CHUNK_ROWS) {
    const chunk = rows.slice(start, start + EVAL_CHUNK_ROWS);
    const batch = new PackedBatch(chunk);
    const values = tf.tidy(() => critic.forward(batch.inputTensor()).values);
    batch.gatherResponse(values).forEach((v, i) => (chunk[i].oldValues = v));
    values.dispose();
  }
}

/**
 * GAE over each trajectory's assistant tokens, turn after turn. With rewardAssignment
 * 'trajectory' the return sits on the last token (RAGEN); with 'turn' each turn's reward sits on
 * that turn's last token. Advantages are then whitened over every token of the batch.
 */
function assignGae(rows: UpdateRow[], trajectories: readonly Trajectory[], config: AlgorithmConfig): void {
  const rowsOf = new Map<number, UpdateRow[]>();
  for (const row of rows) (rowsOf.get(row.trajectory) ?? rowsOf.set(row.trajectory, []).get(row.trajectory)!).push(row);
  for (const [index, trajectoryRows] of rowsOf) {
    const trajectory = trajectories[index];
    const rewards: number[] = [];
    trajectoryRows.forEach((row, turn) => {
      const turnRewards = new Array<number>(row.response.length).fill(0);
      if (config.rewardAssignment === 'turn') turnRewards[turnRewards.length - 1] = trajectory.turns[turn].reward;
      rewards.push(...turnRewards);
    });
    if (config.rewardAssignment === 'trajectory') rewards[rewards.length - 1] = trajectory.return;
    const { advantages, returns } = gae(rewards, trajectoryRows.flatMap((r) => r.oldValues), config.gamma, config.lambda);
    let offset = 0;
    for (const row of trajectoryRows) {
      row.advantages = advantages.slice(offset, offset + row.response.length);
      row.returns = returns.slice(offset, offset + row.response.length);
      offset += row.response.length;
    }
  }
  if (config.whitenAdvantages) {
    const whitened = whiten(rows.flatMap((r) => r.advantages));
    let offset = 0;
    for (const row of rows) {
      row.advantages = whitened.slice(offset, offset + row.advantages.length);
      offset += row.advantages.length;
    }
  }
}

/** GRPO: every token of a trajectory gets its group z-score (R − μ)/(σ + ε). */
function assignGroupZScores(rows: UpdateRow[], groups: readonly Trajectory[][]): void {
  const scores = groupZScores(groups.map((g) => g.map((t) => t.return)));
  const flat = scores.flat();
  for (const row of rows) row.advantages = new Array<number>(row.response.length).fill(flat[row.trajectory]);
}

/** Trajectory indices shuffled and cut into `count` nearly equal minibatches. */
function minibatches(trajectoryCount: number, count: number, rng: Rng): number[][] {
  const order = count > 1 ? rng.shuffle([...Array(trajectoryCount).keys()]) : [...Array(trajectoryCount).keys()];
  const n = Math.min(count, trajectoryCount);
  return Array.from({ length: n }, (_, i) => order.slice(Math.floor((i * trajectoryCount) / n), Math.floor(((i + 1) * trajectoryCount) / n)));
}

function variableNames(model: TransformerLM): Map<string, string> {
  return new Map(model.namedVariables().map(([name, v]) => [v.name, name]));
}

function criticStep(critic: TransformerLM, optimizer: Adam, batch: PackedBatch, rows: UpdateRow[], weights: number[][], config: AlgorithmConfig): Metrics {
  let lossValue = 0;
  const { value, grads } = tf.tidy(() => {
    const inputs = batch.inputTensor();
    const oldValues = batch.perToken(rows.map((r) => r.oldValues));
    const returns = batch.perToken(rows.map((r) => r.returns));
    const w = tf.tensor2d(weights);
    return tf.variableGrads(() => {
      const { values } = critic.forward(inputs);
      return tf.mul(clippedValueLoss({ values, oldValues, returns, weights: w, clip: config.valueClip }), config.valueCoef) as tf.Scalar;
    }, critic.trainableVariables());
  });
  lossValue = value.dataSync()[0];
  value.dispose();
  const norm = applyClipped(optimizer, grads, variableNames(critic), config.maxGradNorm);
  return { [METRIC.lossValue]: lossValue, [METRIC.gradNormCritic]: norm };
}

function actorStep(learner: Learner, batch: PackedBatch, rows: UpdateRow[], weights: number[][], config: AlgorithmConfig, temperature: number): Metrics {
  const { actor, reference } = learner;
  const kept: tf.Scalar[] = [];
  const { value, grads } = tf.tidy(() => {
    const inputs = batch.inputTensor();
    const targets = batch.targetOneHot(actor.config.vocabSize);
    const oldLogProbs = batch.perToken(rows.map((r) => r.oldLogProbs));
    const advantages = batch.perToken(rows.map((r) => r.advantages));
    const w = tf.tensor2d(weights);
    const refLogProbs = reference ? tokenLogProbs(reference.forward(inputs).logits, targets, temperature) : null;
    return tf.variableGrads(() => {
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
      });
      kept.push(tf.keep(policy.loss.clone()), tf.keep(policy.clipFractionHigh), tf.keep(policy.clipFractionLow));
      let loss: tf.Scalar = policy.loss;
      if (config.entropyCoef > 0) {
        loss = tf.sub(loss, tf.mul(weightedTokenSum(tokenEntropy(logits, temperature), w), config.entropyCoef));
      }
      if (refLogProbs) {
        const kl = klK1({ logProbs, refLogProbs, weights: w });
        kept.push(tf.keep(kl.clone()));
        if (config.klCoef > 0) loss = tf.add(loss, tf.mul(kl, config.klCoef));
      }
      return loss;
    }, actor.trainableVariables());
  });
  value.dispose();
  const [policyLoss, clipHigh, clipLow, kl] = kept.map((t) => t.dataSync()[0]);
  tf.dispose(kept);
  const norm = applyClipped(learner.actorOptimizer, grads, variableNames(actor), config.maxGradNorm);
  const metrics: Metrics = {
    [METRIC.lossPolicy]: policyLoss,
    [METRIC.clipFractionHigh]: clipHigh,
    [METRIC.clipFractionLow]: clipLow,
    [METRIC.gradNormActor]: norm,
  };
  if (kl !== undefined) metrics[METRIC.klRef] = kl;
  return metrics;
}

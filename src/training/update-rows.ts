import * as tf from '@tensorflow/tfjs';
import { ACTIVATION_BUDGET_FLOATS, chunksFor } from './accumulate';
import { gae, gigpoTurnAdvantages, groupZScores, whiten } from './algorithms/advantages';
import type { AlgorithmConfig } from './algorithms/presets';
import { PackedBatch, PackedTurns, packTurns } from './policy/batch';
import { ForwardOutput, TransformerLM } from './policy/transformer';
import { Rng } from './random';
import type { Trajectory } from './rollout/engine';

/** A packed row of one trajectory (usually all of it) with its per-token training targets. */
export interface UpdateRow extends PackedTurns {
  trajectory: number;
  oldLogProbs: number[];
  advantages: number[];
  returns: number[];
  oldValues: number[];
}

/** Every trajectory's turns as packed rows, with the log-probabilities they were sampled with. */
export function buildRows(trajectories: readonly Trajectory[]): UpdateRow[] {
  return trajectories.flatMap((t, index) =>
    packTurns(t.turns.map((turn) => ({ context: turn.context, response: turn.response.tokens }))).map((packed) => ({
      ...packed,
      trajectory: index,
      oldLogProbs: packed.turns.flatMap((turn) => t.turns[turn].response.logProbs),
      advantages: [],
      returns: [],
      oldValues: [],
    })),
  );
}

/**
 * `perToken` of a forward pass without gradients, at every row's response tokens, keyed by row
 * in the order of the chunks it ran in.
 */
export function responseValues(model: TransformerLM, rows: readonly UpdateRow[], budget: number, perToken: (out: ForwardOutput, batch: PackedBatch) => tf.Tensor2D): Map<UpdateRow, number[]> {
  const values = new Map<UpdateRow, number[]>();
  for (const chunk of chunksFor(model, rows, false, budget)) {
    const batch = new PackedBatch(chunk);
    const tokens = tf.tidy(() => perToken(model.forward(batch.inputTensor()), batch));
    batch.gatherResponse(tokens).forEach((v, i) => values.set(chunk[i], v));
    tokens.dispose();
  }
  return values;
}

/** V_old at every trained token, from the critic before the update. */
export function assignCriticValues(critic: TransformerLM, rows: UpdateRow[], budget = ACTIVATION_BUDGET_FLOATS): void {
  for (const [row, values] of responseValues(critic, rows, budget, (out) => out.values)) row.oldValues = values;
}

/**
 * GAE over each trajectory's assistant tokens, turn after turn. With rewardAssignment
 * 'trajectory' the return sits on the last token (RAGEN); with 'turn' each turn's reward sits on
 * that turn's last token. Advantages are then whitened over every token of the batch.
 */
export function assignGae(rows: UpdateRow[], trajectories: readonly Trajectory[], config: AlgorithmConfig): void {
  for (const [index, trajectoryRows] of rowsByTrajectory(rows)) {
    const trajectory = trajectories[index];
    const rewards: number[] = [];
    for (const row of trajectoryRows) {
      row.turns.forEach((turn, k) => {
        const turnRewards = new Array<number>(row.turnLengths[k]).fill(0);
        if (config.rewardAssignment === 'turn') turnRewards[turnRewards.length - 1] = trajectory.turns[turn].reward;
        rewards.push(...turnRewards);
      });
    }
    if (config.rewardAssignment === 'trajectory') rewards[rewards.length - 1] = trajectory.return;
    const { advantages, returns } = gae(rewards, trajectoryRows.flatMap((r) => r.oldValues), config.gamma, config.lambda);
    let offset = 0;
    for (const row of trajectoryRows) {
      const n = row.responseIndex.length;
      row.advantages = advantages.slice(offset, offset + n);
      row.returns = returns.slice(offset, offset + n);
      offset += n;
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
export function assignGroupZScores(rows: UpdateRow[], groups: readonly Trajectory[][]): void {
  const flat = groupZScores(groups.map((g) => g.map((t) => t.return))).flat();
  for (const row of rows) row.advantages = new Array<number>(row.responseIndex.length).fill(flat[row.trajectory]);
}

/**
 * GiGPO: each turn's tokens get A^E + ω·A^S of that turn, the step advantage comparing turns
 * taken from the same observation within the group (docs/training.md, "Algorithms"). Returns the
 * share of turns whose observation another turn of their group shares: where it is 0, GiGPO is
 * GRPO.
 */
export function assignGigpo(rows: UpdateRow[], groups: readonly Trajectory[][], config: AlgorithmConfig): number {
  const options = { omega: config.gigpoStepWeight, gamma: config.gigpoGamma, normalization: config.gigpoNormalization };
  const perTurn = groups
    .map((group) => gigpoTurnAdvantages(group.map((t) => ({ return: t.return, steps: t.turns.map((turn) => ({ anchorKey: turn.observation, reward: turn.reward })) })), options))
    .flat();
  for (const row of rows) row.advantages = row.turns.flatMap((turn, k) => new Array<number>(row.turnLengths[k]).fill(perTurn[row.trajectory][turn]));
  let anchored = 0;
  let turns = 0;
  for (const group of groups) {
    const counts = new Map<string, number>();
    for (const turn of group.flatMap((t) => t.turns)) counts.set(turn.observation, (counts.get(turn.observation) ?? 0) + 1);
    for (const count of counts.values()) {
      turns += count;
      if (count > 1) anchored += count;
    }
  }
  return turns > 0 ? anchored / turns : 0;
}

function rowsByTrajectory(rows: readonly UpdateRow[]): Map<number, UpdateRow[]> {
  const byTrajectory = new Map<number, UpdateRow[]>();
  for (const row of rows) (byTrajectory.get(row.trajectory) ?? byTrajectory.set(row.trajectory, []).get(row.trajectory)!).push(row);
  return byTrajectory;
}

/**
 * Trajectory indices of each minibatch of one epoch, shuffled: `miniBatchSize` trajectories per
 * minibatch and a smaller last one for the remainder (veRL's `ppo_mini_batch_size`), or, for
 * jobs that set `miniBatches`, that many nearly equal minibatches.
 */
export function minibatches(trajectoryCount: number, config: Pick<AlgorithmConfig, 'miniBatchSize' | 'miniBatches'>, rng: Rng): number[][] {
  const all = [...Array(trajectoryCount).keys()];
  if (config.miniBatches !== undefined) {
    const order = config.miniBatches > 1 ? rng.shuffle(all) : all;
    const n = Math.min(config.miniBatches, trajectoryCount);
    return Array.from({ length: n }, (_, i) => order.slice(Math.floor((i * trajectoryCount) / n), Math.floor(((i + 1) * trajectoryCount) / n)));
  }
  const size = config.miniBatchSize;
  const order = trajectoryCount > size ? rng.shuffle(all) : all;
  const out: number[][] = [];
  for (let start = 0; start < trajectoryCount; start += size) out.push(order.slice(start, start + size));
  return out;
}

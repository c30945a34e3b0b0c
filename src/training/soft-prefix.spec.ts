import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { Corridor, ScriptedDraws, ScriptedPolicy } from '../../test/support/tree-fixtures';
import { aggregationWeights, ppoPolicyLoss, tokenLogProbs } from './algorithms/losses';
import { PackedBatch } from './policy/batch';
import { NUMBER_HISTORY_TOKENS, Tokenizer } from './policy/tokenizer';
import { TransformerLM } from './policy/transformer';
import { ContextBuilder } from './rollout/context';
import { treeRollout } from './rollout/tree';
import { UpdateRow, assignGroupZScores, buildRows } from './update-rows';

/**
 * ARPO's "soft" shared prefixes: every descendant's row carries the prefix, and the update trains
 * each copy with its own row's advantage. These tests build a real tree, its update rows and the
 * GRPO advantages as `updatePolicy` does (buildRows, assignGroupZScores, token-mean weights), and
 * take the gradient of the same PPO loss: on a prefix token it is the descendants' mean.
 */
describe('soft shared prefixes', () => {
  beforeAll(useTestBackend);

  const tokenizer = new Tokenizer(['P', '_'], ['Left', 'Right'], NUMBER_HISTORY_TOKENS);
  const contexts = new ContextBuilder(tokenizer, 200, 5);
  const settings = { maxTurns: 3, maxActionsPerTurn: 1, maxActionsPerEpisode: 10, temperature: 1, maxTokensPerTurn: 16, think: false, formatPenalty: -0.1 };
  const tree = { rule: 'arpo' as const, groupSize: 4, initialShare: 0.5, threshold: 0.5, entropyWeight: 0.2, penalty: 0.05, entropyTokens: 20, branchesPerDecision: 1, preMonitoring: true, monitorBeta: 0.5 };

  /**
   * Responses in order: round 1 s0 (0), s1 (1); round 2 s0 (2), s1 (3), s2 (4); round 3 s0 (5),
   * s1 (6), s2 (7), s3 (8). Responses 1 and 3–7 are malformed (−0.1 each). Draws: s0 branches
   * in round 1 (s2) and again in round 2 (s3), so s0, s2 and s3 share s0's first turn.
   * Returns: s0 −0.1 (5), s1 −0.3 (1, 3, 6), s2 −0.2 (4, 7), s3 0.
   */
  const MALFORMED = new Set([1, 3, 4, 5, 6, 7]);
  async function branchedGroup() {
    const policy = new ScriptedPolicy(tokenizer, (n) => (MALFORMED.has(n) ? 'Right' : '<answer> Right </answer>'), [0.3, 1.3, 0.5]);
    return (await treeRollout(policy, () => new Corridor(), [7], tokenizer, contexts, settings, tree, new ScriptedDraws([0.3, 0.7, 0.65]))).trajectories;
  }

  it('gives every descendant a row that carries the shared prefix', async () => {
    const trajectories = await branchedGroup();
    expect(trajectories.map((t) => t.branchedFrom)).toEqual([undefined, undefined, { sample: 0, turn: 1 }, { sample: 0, turn: 2 }]);
    expect(trajectories.map((t) => t.return)).toEqual([-0.1, -0.3, -0.2, 0].map((r) => expect.closeTo(r, 12)));
    const rows = buildRows(trajectories);
    expect(rows.map((r) => r.trajectory)).toEqual([0, 1, 2, 3]);
    const prefix = [...trajectories[0].turns[0].context, ...trajectories[0].turns[0].response.tokens];
    for (const d of [0, 2, 3]) expect(rows[d].tokens.slice(0, prefix.length)).toEqual(prefix);
  });

  it('trains a prefix token with the mean advantage of its descendants, once per descendant', async () => {
    const trajectories = await branchedGroup();
    const rows = buildRows(trajectories);
    assignGroupZScores(rows, [trajectories]);
    const descendants = [0, 2, 3];
    const prefixLength = trajectories[0].turns[0].response.tokens.length;
    const advantages = rows.map((r) => r.advantages[0]);
    // Distinct advantages among the descendants and a mean off 0, so that "the mean" says something.
    expect(new Set(descendants.map((d) => advantages[d].toFixed(6))).size).toBe(3);
    const meanAdvantage = descendants.reduce((sum, d) => sum + advantages[d], 0) / descendants.length;
    expect(Math.abs(meanAdvantage)).toBeGreaterThan(0.1);

    // Token-mean weights (ARPO's loss aggregation) over the whole group: one w for every token.
    const weights = aggregationWeights(rows.map((r) => r.responseIndex.map(() => 1)), rows.map((r) => r.trajectory), 'token-mean');
    const w = weights[0][0];
    const totalTokens = rows.reduce((n, r) => n + r.responseIndex.length, 0);
    expect(w).toBeCloseTo(1 / totalTokens, 12);

    // ∂loss/∂log π at each copy of a prefix token, at ratio 1: −A_d·w; summed over the copies,
    // −(A_0 + A_2 + A_3)·w = −3·w·mean(A_d).
    const batch = new PackedBatch(rows);
    const perCopy = tf.tidy(() => {
      const logProbs = batch.perToken(rows.map((r) => r.responseIndex.map(() => -1)));
      const old = logProbs.clone();
      const lossOf = (lp: tf.Tensor) => policyLoss(batch, rows, weights, lp as tf.Tensor2D, old);
      return batch.gatherResponse(tf.grad(lossOf)(logProbs) as tf.Tensor2D);
    });
    for (let j = 0; j < prefixLength; j++) {
      descendants.forEach((d) => expect(perCopy[d][j]).toBeCloseTo(-advantages[d] * w, 6));
      const summed = descendants.reduce((sum, d) => sum + perCopy[d][j], 0);
      expect(summed).toBeCloseTo(-descendants.length * w * meanAdvantage, 6);
    }

    // The same through a policy network: the parameter gradient of the prefix tokens of the
    // three rows equals that of one row trained with the mean advantage at 3·w.
    const model = new TransformerLM({ vocabSize: tokenizer.size, contextLength: 128, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true }, 3);
    const onPrefix = (row: UpdateRow, weight: number) => row.responseIndex.map((_, j) => (j < prefixLength ? weight : 0));
    const soft = parameterGradient(model, rows, rows.map((r) => (descendants.includes(r.trajectory) ? onPrefix(r, w) : r.responseIndex.map(() => 0))));
    const hardRow = { ...rows[0], advantages: rows[0].advantages.map(() => meanAdvantage) };
    const hard = parameterGradient(model, [hardRow], [onPrefix(hardRow, descendants.length * w)]);
    let largest = 0;
    for (const name of Object.keys(soft)) {
      const a = soft[name];
      const b = hard[name];
      a.forEach((x, i) => {
        largest = Math.max(largest, Math.abs(b[i]));
        expect(x).toBeCloseTo(b[i], 5);
      });
    }
    expect(largest).toBeGreaterThan(1e-4);
    model.dispose();
  });
});

/** The PPO loss of `updatePolicy`'s actor step (ε 0.2, dual clip 3) with the rows' advantages. */
function policyLoss(batch: PackedBatch, rows: readonly UpdateRow[], weights: number[][], logProbs: tf.Tensor2D, oldLogProbs: tf.Tensor2D): tf.Scalar {
  return ppoPolicyLoss({
    logProbs,
    oldLogProbs,
    advantages: batch.perToken(rows.map((r) => r.advantages)),
    weights: batch.perToken(weights),
    clipLow: 0.2,
    clipHigh: 0.2,
    dualClip: 3,
  }).loss;
}

/** ∇θ of the policy loss at ratio 1 (π_old = π_θ), per variable, read back. */
function parameterGradient(model: TransformerLM, rows: readonly UpdateRow[], weights: number[][]): Record<string, Float32Array> {
  const batch = new PackedBatch(rows);
  return tf.tidy(() => {
    const inputs = batch.inputTensor();
    const targets = batch.targetOneHot(model.config.vocabSize);
    const old = tokenLogProbs(model.forward(inputs).logits, targets, 1);
    const { grads, value } = tf.variableGrads(() => policyLoss(batch, rows, weights, tokenLogProbs(model.forward(inputs).logits, targets, 1), old), model.trainableVariables());
    value.dispose();
    return Object.fromEntries(Object.entries(grads).map(([name, g]) => [name, g.dataSync() as Float32Array]));
  });
}

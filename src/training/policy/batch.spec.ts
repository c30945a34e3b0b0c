import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../../test/support/tf';
import { tokenLogProbs } from '../algorithms/losses';
import { PackedBatch, chunkRows, packTurns, turnRow } from './batch';
import { TransformerLM } from './transformer';

describe('packTurns', () => {
  // Turn 2's context is turn 1's context + response + the next observation [7, 8].
  const turns = [
    { context: [1, 2, 3], response: [4, 5] },
    { context: [1, 2, 3, 4, 5, 7, 8], response: [6] },
    { context: [1, 9], response: [4] },
  ];

  it('packs a turn into the previous row when its context extends that row, and starts a new row otherwise', () => {
    const rows = packTurns(turns);
    expect(rows.map((r) => r.tokens)).toEqual([[1, 2, 3, 4, 5, 7, 8, 6], [1, 9, 4]]);
    expect(rows.map((r) => r.responseIndex)).toEqual([[3, 4, 7], [2]]);
    expect(rows.map((r) => r.turns)).toEqual([[0, 1], [2]]);
    expect(rows.map((r) => r.turnLengths)).toEqual([[2, 1], [1]]);
  });

  it('skips turns without response tokens', () => {
    expect(packTurns([{ context: [1], response: [] }, { context: [1, 2], response: [3] }]).map((r) => r.tokens)).toEqual([[1, 2, 3]]);
  });

  it('predicts each trained token of a packed row as its own turn row would (same log-probabilities)', async () => {
    await useTestBackend();
    const model = new TransformerLM({ vocabSize: 10, contextLength: 16, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true }, 3);
    const logProbsOf = (rows: ReturnType<typeof turnRow>[]) => {
      const batch = new PackedBatch(rows);
      const t = tf.tidy(() => tokenLogProbs(model.forward(batch.inputTensor()).logits, batch.targetOneHot(10), 1));
      const values = batch.gatherResponse(t).flat();
      t.dispose();
      return values;
    };
    const packed = logProbsOf(packTurns(turns));
    const perTurn = logProbsOf(turns.map(turnRow));
    expect(packed.length).toBe(4);
    packed.forEach((value, i) => expect(value).toBeCloseTo(perTurn[i], 5));
    model.dispose();
  });
});

describe('chunkRows', () => {
  it('groups rows shortest first under a budget, a too-large row alone', () => {
    const rows = [5, 2, 9, 3].map((n) => ({ tokens: new Array(n).fill(1), responseIndex: [n - 1] }));
    // cost = rows × length (padded): 2+3 → 2·3 = 6 ≤ 10; adding 5 → 3·5 = 15 > 10; 5 alone; 9 alone (> 10 with any other).
    expect(chunkRows(rows, (count, length) => count * length, 10)).toEqual([[1, 3], [0], [2]]);
  });
});

import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { tokenLogProbs } from './algorithms/losses';
import { Adam } from './policy/adam';
import { PackedBatch, packTurns } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { supervisedStep } from './warmup';

describe('supervisedStep', () => {
  beforeAll(useTestBackend);

  it('adds coef × the mean cross-entropy of the feedback tokens to the responses’ mean cross-entropy', () => {
    const model = new TransformerLM({ vocabSize: 10, contextLength: 16, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true }, 2);
    // One episode: context [1, 2], response [3, 4], feedback [5, 6], response [7].
    const rows = packTurns([{ context: [1, 2], response: [3, 4] }, { context: [1, 2, 3, 4, 5, 6], response: [7] }]);
    const batch = new PackedBatch(rows);
    const lp = tf.tidy(() => tokenLogProbs(model.forward(batch.inputTensor()).logits, batch.targetOneHot(10)).arraySync() as number[][])[0];
    // Token i is predicted at position i − 1: responses at 2, 3, 6 → positions 1, 2, 5; feedback 4, 5 → 3, 4.
    const responses = -(lp[1] + lp[2] + lp[5]) / 3;
    const feedback = -(lp[3] + lp[4]) / 2;
    // A learning rate of 0 keeps the weights, so both losses are measured at the same point.
    const frozen = new Adam(model.namedVariables(), 0);
    expect(supervisedStep(model, frozen, rows, 1)).toBeCloseTo(responses, 5);
    expect(supervisedStep(model, frozen, rows, 1, 0.5)).toBeCloseTo(responses + 0.5 * feedback, 5);
    frozen.dispose();
    model.dispose();
  });
});

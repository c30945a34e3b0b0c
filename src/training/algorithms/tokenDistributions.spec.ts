import '@tensorflow/tfjs-backend-wasm';
import * as tf from '@tensorflow/tfjs';

import { stopGradient, tokenEntropy, tokenLogProbs } from './tokenDistributions';

beforeAll(async () => {
  await tf.setBackend('wasm');
  await tf.ready();
});

describe('stopGradient', () => {
  it('is the identity forward and blocks the gradient', () => {
    const x = tf.tensor1d([1.5, -2, 3]);
    expect(Array.from(stopGradient(x).dataSync())).toEqual([1.5, -2, 3]);
    // d/dx Σ sg(x)·x = sg(x): only the second factor passes gradient.
    const grad = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(stopGradient(v), v)))(x);
    expect(grad.shape).toEqual([3]);
    expect(Array.from(grad.dataSync())).toEqual([1.5, -2, 3]);
    const blocked = tf.grad((v: tf.Tensor) => tf.sum(stopGradient(v)))(x);
    expect(Array.from(blocked.dataSync())).toEqual([0, 0, 0]);
  });
});

describe('tokenLogProbs', () => {
  // position 0: p = [0.5, 0.25, 0.25], target 1; position 1: uniform, target 2
  const logits = () => tf.tensor3d([[[Math.log(0.5), Math.log(0.25), Math.log(0.25)], [0, 0, 0]]]);
  const targets = () => tf.tensor3d([[[0, 1, 0], [0, 0, 1]]]);

  it('picks log softmax of the target with a one-hot mask', () => {
    const logProbs = tokenLogProbs(logits(), targets());
    expect(logProbs.shape).toEqual([1, 2]);
    const [first, second] = logProbs.dataSync();
    expect(first).toBeCloseTo(Math.log(0.25), 5);
    expect(second).toBeCloseTo(Math.log(1 / 3), 5);
  });

  it('divides the logits by the temperature', () => {
    const [first, second] = tokenLogProbs(logits(), targets(), 2).dataSync();
    // z / 2 → p ∝ [√0.5, √0.25, √0.25]
    expect(first).toBeCloseTo(Math.log(0.5 / (Math.sqrt(0.5) + 0.5 + 0.5)), 5);
    expect(second).toBeCloseTo(Math.log(1 / 3), 5);
  });

  it('is 0 on a padding position whose one-hot row is all zeros', () => {
    const [, padded] = tokenLogProbs(logits(), tf.tensor3d([[[0, 1, 0], [0, 0, 0]]])).dataSync();
    expect(padded).toBe(0);
  });
});

describe('tokenEntropy', () => {
  it('is log 4 for a uniform distribution over four tokens', () => {
    const entropy = tokenEntropy(tf.tensor3d([[[0.3, 0.3, 0.3, 0.3]]]));
    expect(entropy.shape).toEqual([1, 1]);
    expect(entropy.dataSync()[0]).toBeCloseTo(Math.log(4), 5);
  });

  it('is 1.5 log 2 for [0.5, 0.25, 0.25], and follows the temperature', () => {
    const logits = tf.tensor3d([[[Math.log(0.5), Math.log(0.25), Math.log(0.25)]], [[1, 1, 1]]]);
    const entropy = tokenEntropy(logits);
    expect(entropy.shape).toEqual([2, 1]);
    expect(entropy.dataSync()[0]).toBeCloseTo(1.5 * Math.log(2), 5);
    expect(entropy.dataSync()[1]).toBeCloseTo(Math.log(3), 5);
    // τ = 0.5 squares the probabilities: ∝ [0.25, 0.0625, 0.0625] = [2/3, 1/6, 1/6]
    const sharpened = tokenEntropy(logits, 0.5).dataSync()[0];
    expect(sharpened).toBeCloseTo(-((2 / 3) * Math.log(2 / 3) + 2 * (1 / 6) * Math.log(1 / 6)), 5);
  });
});

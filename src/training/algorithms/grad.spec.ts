import '@tensorflow/tfjs-backend-wasm';
import * as tf from '@tensorflow/tfjs';

import { clipByGlobalNorm, explainedVariance, globalNorm } from './grad';

beforeAll(async () => {
  await tf.setBackend('wasm');
  await tf.ready();
});

describe('globalNorm', () => {
  it('is the 2-norm over all tensors together', () => {
    const grads = [tf.tensor1d([3, 4]), tf.tensor2d([[12]])];
    expect(globalNorm(grads)).toBeCloseTo(Math.sqrt(3 * 3 + 4 * 4 + 12 * 12), 5); // 13
    expect(globalNorm([])).toBe(0);
    tf.dispose(grads);
  });
});

describe('clipByGlobalNorm', () => {
  it('scales every tensor by maxNorm / norm and reports the pre-clip norm', () => {
    const grads = [tf.tensor1d([3, 4]), tf.tensor2d([[12]])];
    const before = tf.memory().numTensors;
    const { clipped, norm } = clipByGlobalNorm(grads, 1);
    expect(tf.memory().numTensors).toBe(before + 2);
    expect(norm).toBeCloseTo(13, 5);
    expect(clipped.map((g) => g.shape)).toEqual([[2], [1, 1]]);
    // New tensors: disposing the inputs leaves the clipped ones readable.
    tf.dispose(grads);
    const [first, second] = clipped.map((g) => Array.from(g.dataSync()));
    expect(first[0]).toBeCloseTo(3 / 13, 6);
    expect(first[1]).toBeCloseTo(4 / 13, 6);
    expect(second[0]).toBeCloseTo(12 / 13, 6);
    expect(globalNorm(clipped)).toBeCloseTo(1, 5);
    tf.dispose(clipped);
  });

  it('leaves gradients below the limit unchanged', () => {
    const grads = [tf.tensor1d([3, 4])];
    const { clipped, norm } = clipByGlobalNorm(grads, 10);
    expect(norm).toBeCloseTo(5, 5);
    expect(clipped[0]).not.toBe(grads[0]);
    expect(Array.from(clipped[0].dataSync())).toEqual([3, 4]);
    tf.dispose([...grads, ...clipped]);
  });
});

describe('explainedVariance', () => {
  it('is 1 − Var(R − V) / Var(R)', () => {
    // residuals [0, 0, 0, −1]: mean −0.25, variance (3 · 0.0625 + 0.5625) / 4 = 0.1875;
    // Var(R) of [1, 2, 3, 4] = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
    expect(explainedVariance([1, 2, 3, 5], [1, 2, 3, 4])).toBeCloseTo(1 - 0.1875 / 1.25, 12);
    expect(explainedVariance([1, 2, 3, 4], [1, 2, 3, 4])).toBeCloseTo(1, 12);
    expect(explainedVariance([2.5, 2.5, 2.5, 2.5], [1, 2, 3, 4])).toBeCloseTo(0, 12);
  });

  it('is NaN when the returns do not vary', () => {
    expect(explainedVariance([0, 1], [1, 1])).toBeNaN();
  });
});

import '@tensorflow/tfjs-backend-wasm';
import * as tf from '@tensorflow/tfjs';

import { aggregationWeights, weightedTokenSum } from './aggregation';

beforeAll(async () => {
  await tf.setBackend('wasm');
  await tf.ready();
});

describe('aggregationWeights', () => {
  // Trajectory 7 spans rows 0–1 (2 + 1 = 3 tokens), trajectory 3 spans rows 2–3 (4 + 1 = 5
  // tokens), trajectory 9 (row 4) has no loss token.
  const mask = [
    [1, 1, 0, 0],
    [0, 1, 0, 0],
    [1, 1, 1, 1],
    [1, 0, 0, 0],
    [0, 0, 0, 0],
  ];
  const rowTrajectory = [7, 7, 3, 3, 9];
  const total = (weights: number[][]) => weights.flat().reduce((sum, w) => sum + w, 0);

  it('seq-mean-token-mean: 1 / (tokens of the trajectory × trajectories)', () => {
    const weights = aggregationWeights(mask, rowTrajectory, 'seq-mean-token-mean');
    expect(weights.map((row) => row.length)).toEqual([4, 4, 4, 4, 4]);
    expect(weights[0][0]).toBeCloseTo(1 / (3 * 2), 12);
    expect(weights[1][1]).toBeCloseTo(1 / (3 * 2), 12);
    expect(weights[2][3]).toBeCloseTo(1 / (5 * 2), 12);
    expect(weights[3][0]).toBeCloseTo(1 / (5 * 2), 12);
    expect(weights[0][2]).toBe(0);
    expect(weights[4]).toEqual([0, 0, 0, 0]);
    expect(total(weights)).toBeCloseTo(1, 12);
  });

  it('token-mean: 1 / all tokens', () => {
    const weights = aggregationWeights(mask, rowTrajectory, 'token-mean');
    expect(weights[0][0]).toBeCloseTo(1 / 8, 12);
    expect(weights[2][1]).toBeCloseTo(1 / 8, 12);
    expect(weights[1][0]).toBe(0);
    expect(total(weights)).toBeCloseTo(1, 12);
  });

  it('rejects a trajectory id list of the wrong length', () => {
    expect(() => aggregationWeights(mask, [7], 'token-mean')).toThrow(RangeError);
  });
});

describe('weightedTokenSum', () => {
  it('is Σ w·x, not renormalised', () => {
    const sum = weightedTokenSum(tf.tensor2d([[2, 4], [6, 8]]), tf.tensor2d([[0.25, 0], [0.25, 0]]));
    expect(sum.shape).toEqual([]);
    expect(sum.dataSync()[0]).toBeCloseTo(0.25 * 2 + 0.25 * 6, 6);
  });
});

import * as tf from '@tensorflow/tfjs';
import { Adam } from './adam';

describe('Adam / AdamW', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu');
  });

  it('takes Adam steps with bias correction: the first step moves each weight by lr·sign(g)', () => {
    const theta = tf.variable(tf.tensor1d([1, -2]));
    const adam = new Adam([['theta', theta]], 0.1);
    adam.apply(new Map([['theta', tf.tensor1d([0.5, -3])]]));
    // m̂ = g, v̂ = g², so the update is g/(|g| + 1e-8) ≈ sign(g): 1 − 0.1, −2 + 0.1.
    expect(Array.from(theta.dataSync())).toEqual([expect.closeTo(0.9, 6), expect.closeTo(-1.9, 6)]);
    // Second step with g = (0.5, −3) again: m̂ = g, v̂ = g² once more.
    adam.apply(new Map([['theta', tf.tensor1d([0.5, -3])]]));
    expect(Array.from(theta.dataSync())).toEqual([expect.closeTo(0.8, 6), expect.closeTo(-1.8, 6)]);
    adam.dispose();
    theta.dispose();
  });

  it('decays the weights decoupled from the gradient (AdamW): θ·(1 − lr·λ) − lr·m̂/(√v̂ + ε)', () => {
    const theta = tf.variable(tf.tensor1d([2]));
    const adamw = new Adam([['theta', theta]], 0.1, 0.01);
    adamw.apply(new Map([['theta', tf.tensor1d([4])]]));
    // 2·(1 − 0.1·0.01) − 0.1·1 = 1.998 − 0.1 = 1.898
    expect(theta.dataSync()[0]).toBeCloseTo(2 * (1 - 0.1 * 0.01) - 0.1, 6);
    // A zero gradient: the weight still decays, and Adam's moments carry the first step on:
    // m = 0.9·(0.1·4) = 0.36, v = 0.999·(0.001·16) = 0.015984, bias-corrected by 1−β^2.
    const before = theta.dataSync()[0];
    adamw.apply(new Map([['theta', tf.tensor1d([0])]]));
    const mHat = 0.36 / (1 - 0.9 ** 2);
    const vHat = 0.015984 / (1 - 0.999 ** 2);
    expect(theta.dataSync()[0]).toBeCloseTo(before * (1 - 0.001) - (0.1 * mHat) / Math.sqrt(vHat), 5);
    adamw.dispose();
    theta.dispose();
  });

  it('leaves no tensor behind, from construction on', () => {
    const theta = tf.variable(tf.zeros([3, 4]));
    const before = tf.memory().numTensors;
    const adam = new Adam([['theta', theta]], 0.01, 0.01);
    // Two moments per parameter and nothing else.
    expect(tf.memory().numTensors).toBe(before + 2);
    for (let step = 0; step < 3; step++) {
      const grad = tf.ones([3, 4]);
      adam.apply(new Map([['theta', grad]]));
      grad.dispose();
    }
    expect(tf.memory().numTensors).toBe(before + 2);
    adam.dispose();
    expect(tf.memory().numTensors).toBe(before);
    theta.dispose();
  });

  it('round-trips its state', () => {
    const theta = tf.variable(tf.tensor1d([1, 2]));
    const adam = new Adam([['theta', theta]], 0.1);
    adam.apply(new Map([['theta', tf.tensor1d([1, 1])]]));
    const copy = new Adam([['theta', theta]], 0.1);
    copy.setState(adam.getState());
    expect(copy.getState()).toEqual(adam.getState());
    adam.dispose();
    copy.dispose();
    theta.dispose();
  });
});

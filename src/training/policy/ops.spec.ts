import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../../test/support/tf';
import { withWasmMatMul } from '../native-kernels';
import { Rng } from '../random';
import { matMul } from './ops';

const bits = (t: tf.Tensor) => Array.from(new Uint32Array(Float32Array.from(t.dataSync()).buffer));
const swapLast = (x: tf.Tensor) => tf.transpose(x, [...x.shape.keys()].map((i, _, all) => (i < all.length - 2 ? i : 2 * all.length - 3 - i)));

function random(rng: Rng, shape: number[]): tf.Tensor {
  return tf.tensor(Float32Array.from({ length: shape.reduce((x, y) => x * y, 1) }, () => rng.normal()), shape);
}

describe('matMul with plain products in the backward pass', () => {
  beforeAll(useTestBackend);

  it('gives hand-computed gradients when a is the larger operand', () => {
    // a is 2×3 (6 values), b 3×1 and dY 2×1 (5 together): dB is taken as (dYᵀ · a)ᵀ.
    const a = tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3]);
    const b = tf.tensor2d([1, 0, -1], [3, 1]);
    const [dA, dB] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(matMul(x, y)))([a, b]);
    // dA = dY · bᵀ = [1; 1] · [1 0 −1]; dB = aᵀ · dY = the column sums of a: 1+4, 2+5, 3+6.
    expect(Array.from(dA.dataSync())).toEqual([1, 0, -1, 1, 0, -1]);
    expect(Array.from(dB.dataSync())).toEqual([5, 7, 9]);
    tf.dispose([a, b, dA, dB]);
  });

  it.each([
    ['attention weights · values (a larger)', [2, 3, 70, 70], [2, 3, 70, 9]],
    ['queries · keysᵀ (dY larger)', [2, 3, 70, 9], [2, 3, 9, 70]],
    ['a weight (2-D, b larger than the rest)', [5, 40], [40, 300]],
  ])('gives bit for bit aᵀ · dY and dY · bᵀ: %s, on the native and the wasm kernels', (_name, shapeA, shapeB) => {
    const rng = new Rng(11);
    const a = random(rng, shapeA);
    const b = random(rng, shapeB);
    const dy = random(rng, [...shapeA.slice(0, -1), shapeB.at(-1)!]);
    const run = () => tf.tidy(() => {
      const [dA, dB] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(matMul(x, y), dy)))([a, b]);
      return [bits(dA), bits(dB), bits(tf.matMul(dy, swapLast(b))), bits(tf.matMul(swapLast(a), dy))];
    });
    for (const [dA, dB, direct, transposedA] of [run(), withWasmMatMul(run)]) {
      expect(dA).toEqual(direct);
      expect(dB).toEqual(transposedA);
    }
    tf.dispose([a, b, dy]);
  });
});

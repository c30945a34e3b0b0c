import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';

describe('wasm Identity and same-dtype Cast share buffers', () => {
  beforeAll(useTestBackend);

  const buffers = () => tf.memory().numDataBuffers;

  it('clone and a float32 cast of float32 add no buffer, and outlive the tensor they came from', () => {
    const x = tf.tensor1d([1.5, -2, 3]);
    const before = buffers();
    const clone = tf.clone(x);
    const cast = tf.cast(x, 'float32');
    expect(buffers()).toBe(before);
    x.dispose();
    expect(Array.from(clone.dataSync())).toEqual([1.5, -2, 3]);
    expect(Array.from(cast.dataSync())).toEqual([1.5, -2, 3]);
    clone.dispose();
    expect(Array.from(cast.dataSync())).toEqual([1.5, -2, 3]);
    cast.dispose();
    expect(buffers()).toBe(before - 1);
  });

  it('casts to another dtype still convert into a new buffer', () => {
    const x = tf.tensor1d([1.5, -2.7, 3]);
    const before = buffers();
    const ints = tf.cast(x, 'int32');
    expect(buffers()).toBe(before + 1);
    expect(ints.dtype).toBe('int32');
    expect(Array.from(ints.dataSync())).toEqual([1, -2, 3]);
    const back = tf.cast(tf.tensor1d([4, -1], 'int32'), 'float32');
    expect(back.dtype).toBe('float32');
    expect(Array.from(back.dataSync())).toEqual([4, -1]);
    tf.dispose([x, ints, back]);
  });

  it('a variable assigned after a clone leaves the clone its old values', () => {
    const v = tf.variable(tf.tensor1d([1, 2]));
    const kept = tf.clone(v);
    v.assign(tf.tensor1d([5, 6]));
    expect(Array.from(kept.dataSync())).toEqual([1, 2]);
    expect(Array.from(v.dataSync())).toEqual([5, 6]);
    tf.dispose([v, kept]);
  });

  it('gradients that read saved tensors are unchanged', () => {
    // d/dx (x·x·x) = 3x², at x = 2: 3·4 = 12; at x = −1: 3·1 = 3. The backward pass reads the
    // inputs tfjs saved (as shared clones) for Mul's gradient.
    const x = tf.tensor1d([2, -1]);
    const dx = tf.grad((t: tf.Tensor) => tf.sum(tf.mul(tf.mul(t, t), t)))(x);
    expect(Array.from(dx.dataSync())).toEqual([12, 3]);
    // customGrad's save keeps shared clones too: f(x) = x², with the gradient 2·x·dy.
    const square = tf.customGrad(((t: tf.Tensor, save: tf.GradSaveFunc) => {
      save([t]);
      return { value: tf.square(t), gradFunc: (dy: tf.Tensor, [saved]: tf.Tensor[]) => tf.mul(tf.mul(dy, saved), 2) };
    }) as unknown as Parameters<typeof tf.customGrad>[0]) as (t: tf.Tensor) => tf.Tensor;
    const dSquare = tf.grad((t: tf.Tensor) => tf.sum(square(t)))(x);
    expect(Array.from(dSquare.dataSync())).toEqual([4, -2]);
    const before = tf.memory().numTensors;
    tf.dispose([x, dx, dSquare]);
    expect(tf.memory().numTensors).toBe(before - 3);
  });
});

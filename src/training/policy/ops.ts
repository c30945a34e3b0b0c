import * as tf from '@tensorflow/tfjs';

/** Swaps the last two axes. */
function swapLast(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  [perm[perm.length - 2], perm[perm.length - 1]] = [perm[perm.length - 1], perm[perm.length - 2]];
  return tf.transpose(x, perm);
}

/**
 * a · b (2-D or batched) whose backward pass materialises the transposes and then runs plain
 * matMuls: dA = dY · bᵀ, dB = aᵀ · dY. The wasm backend runs matMul with transposeA/transposeB
 * (which tfjs's built-in gradient uses) about 10× slower than a transpose plus a plain matMul
 * (bench: 3300×128 · (32×128)ᵀ 21 ms vs 2.3 ms), and the backward pass is most of an update.
 *
 * Where the operand to transpose is larger than the other two (attention's weights in P · V),
 * the product is taken the other way round, dB = (dYᵀ · a)ᵀ, transposing only small tensors:
 * at the largest shape the attention maps' transposes were 5% of an update. Both forms sum the
 * same products (x·y = y·x exactly) over the shared axis in the same order, and the product
 * kernels' summation order does not depend on the output's shape (native-kernels.ts), so the
 * bits are the same (ops.spec.ts).
 */
export const matMul = tf.customGrad(((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [savedA, savedB] = saved;
      const times = (x: tf.Tensor, y: tf.Tensor) => tf.matMul(x as tf.Tensor2D, y as tf.Tensor2D);
      // Transpose the saved operand, unless it outsizes dY and the other operand together.
      const dA = savedB.size <= dy.size + savedA.size ? times(dy, swapLast(savedB)) : swapLast(times(savedB, swapLast(dy)));
      const dB = savedA.size <= dy.size + savedB.size ? times(swapLast(savedA), dy) : swapLast(times(swapLast(dy), savedA));
      return [dA, dB];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as <T extends tf.Tensor>(a: T, b: tf.Tensor) => T;

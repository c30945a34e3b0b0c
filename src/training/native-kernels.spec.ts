import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { useTestBackend } from '../../test/support/tf';
import { VECTOR_BITS, nativeKernelsInstalled, nativeProductCount, setNativeThreads, setNativeVectorBits, withWasmMatMul } from './native-kernels';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';

const bits = (t: tf.Tensor) => Array.from(new Uint32Array(Float32Array.from(t.dataSync()).buffer));

function random(rng: Rng, shape: number[]): tf.Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  return tf.tensor(Float32Array.from({ length: size }, () => rng.normal()), shape);
}

/** How many of two products' floats differ in any bit (a count fails fast where a diff of 100k floats would not). */
const differing = (x: number[], y: number[]) => (x.length === y.length ? x.filter((v, i) => v !== y[i]).length : Infinity);

/** The native product and the wasm kernel's, as float bit patterns. */
function bothWays(a: tf.Tensor, b: tf.Tensor): [number[], number[]] {
  const before = nativeProductCount();
  const native = tf.tidy(() => bits(tf.matMul(a, b)));
  if (process.env.STARLAB_NATIVE_KERNELS !== '0') expect(nativeProductCount()).toBe(before + 1);
  return [native, withWasmMatMul(() => tf.tidy(() => bits(tf.matMul(a, b))))];
}

describe('native matMul kernels', () => {
  beforeAll(async () => {
    await useTestBackend();
    // CI builds the addon at `npm ci`; a machine that cannot build it opts out explicitly.
    if (process.env.STARLAB_NATIVE_KERNELS !== '0') expect(nativeKernelsInstalled()).toBe(true);
  });
  afterEach(() => {
    setNativeThreads(1);
    setNativeVectorBits(512);
  });

  it('computes a hand-checked product, and transposed ones through the wasm kernel', () => {
    const a = tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3]);
    const b = tf.tensor2d([7, 8, 9, 10, 11, 12], [3, 2]);
    // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
    expect(Array.from(tf.matMul(a, b).dataSync())).toEqual([58, 64, 139, 154]);
    // aᵀ is [1 4; 2 5; 3 6]; aᵀ · [1 0 0; 0 1 0]-shaped 2×3 rows (b's first two rows reshaped)
    expect(Array.from(tf.matMul(a, tf.tensor2d([1, 0, 0, 1], [2, 2]), true, false).dataSync())).toEqual([1, 4, 2, 5, 3, 6]);
    expect(Array.from(tf.matMul(a, a, false, true).dataSync())).toEqual([14, 32, 32, 77]);
    tf.dispose([a, b]);
  });

  it.each([
    ['2-D, ragged tiles', [37, 53], [53, 19]],
    ['2-D, the model\'s widths', [700, 64], [64, 192]],
    ['2-D, long K (a weight gradient)', [64, 2100], [2100, 47]],
    ['batched, K under one block', [8, 33, 16], [8, 16, 41]],
    ['batched, K over several blocks (attention · values)', [2, 4, 50, 130], [2, 4, 130, 16]],
    ['batched, one row (decoding)', [64, 1, 16], [64, 16, 97]],
    // Over the 30 MFLOP from which the addon splits a product among threads:
    ['2-D, large enough for threads', [1210, 160], [160, 99]],
    ['batched, large enough for threads', [8, 4, 130, 64], [8, 4, 64, 130]],
  ])('equals the wasm kernel bit for bit: %s, on 1 and 2 threads, in every vector width the CPU has', (_name, shapeA, shapeB) => {
    const rng = new Rng(5);
    const a = random(rng, shapeA);
    const b = random(rng, shapeB);
    const [native, wasm] = bothWays(a, b);
    expect(differing(native, wasm)).toBe(0);
    setNativeThreads(2);
    expect(differing(bothWays(a, b)[0], wasm)).toBe(0);
    // The narrower machines' kernels (AVX2, SSE) where this CPU has wider ones; threads split the
    // tiles the same way in every width, so one thread is enough.
    setNativeThreads(1);
    for (const width of VECTOR_BITS.slice(1)) {
      if (process.env.STARLAB_NATIVE_KERNELS !== '0') expect(setNativeVectorBits(width)).toBeLessThanOrEqual(width);
      expect(differing(bothWays(a, b)[0], wasm)).toBe(0);
    }
    tf.dispose([a, b]);
  });

  it('leaves a transformer\'s logits and gradients bit for bit those of the wasm path', () => {
    const model = new TransformerLM({ vocabSize: 23, contextLength: 70, layers: 2, dModel: 32, heads: 4, ffnMultiplier: 4, rope: true }, 3);
    const rng = new Rng(9);
    const tokens = tf.tensor2d(Int32Array.from({ length: 3 * 60 }, () => rng.int(23)), [3, 60], 'int32');
    const run = () => tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => tf.mean(tf.square(model.forward(tokens).logits)) as tf.Scalar, model.trainableVariables());
      return [bits(value), ...Object.keys(grads).sort().map((k) => bits(grads[k]))];
    });
    setNativeThreads(2);
    expect(run()).toEqual(withWasmMatMul(run));
    tokens.dispose();
    model.dispose();
  });

  it('runs the widest vectors the CPU has (Linux: the flags of /proc/cpuinfo)', () => {
    if (process.env.STARLAB_NATIVE_KERNELS === '0' || !existsSync('/proc/cpuinfo')) return;
    const flags = readFileSync('/proc/cpuinfo', 'utf8');
    const widest = /\bavx512f\b/.test(flags) ? 512 : /\bavx2\b/.test(flags) ? 256 : 128;
    expect(setNativeVectorBits(512)).toBe(widest);
  });

  it('is absent with STARLAB_NATIVE_KERNELS=0, and training products still work', () => {
    const script = "const { initBackend } = require('./src/training/backend'); const { nativeKernelsInstalled } = require('./src/training/native-kernels'); const tf = require('@tensorflow/tfjs');" +
      " initBackend('wasm').then(() => console.log(JSON.stringify({ native: nativeKernelsInstalled(), product: Array.from(tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.tensor2d([5, 6, 7, 8], [2, 2])).dataSync()) })));";
    const run = spawnSync(process.execPath, ['-r', `${__dirname}/../../scripts/register.js`, '-e', script], { cwd: `${__dirname}/../..`, encoding: 'utf8', env: { ...process.env, STARLAB_NATIVE_KERNELS: '0' } });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ native: false, product: [19, 22, 43, 50] });
  });
});

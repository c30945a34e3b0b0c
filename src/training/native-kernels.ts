import * as tf from '@tensorflow/tfjs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The addon built from native/kernels.cc by `npm install` (scripts/build-native.js), when it built. */
interface NativeKernels {
  matmul(heap: Float32Array, a: number, b: number, out: number, batch: number, m: number, k: number, n: number, kBlock: number, threads: number): void;
  /** Caps the vectors' width (512, 256 or 128 bits) at most at the CPU's; returns the width in use. */
  setVectorBits(bits: number): number;
}

/** Widths the addon has a kernel for: AVX-512, AVX2, SSE. */
export const VECTOR_BITS = [512, 256, 128] as const;

/** tfjs-backend-wasm sums a batched product (batch > 1) over K in blocks of this many terms. */
const WASM_BATCH_K_BLOCK = 48;

interface WasmBackend {
  dataIdMap: { get(dataId: object): { memoryOffset: number } };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  wasm: { HEAPF32: Float32Array };
}

/** From src/training (ts) or dist/src/training (built): the package root's native/build. */
function addonPath(): string | null {
  for (const up of ['../..', '../../..']) {
    const path = join(__dirname, up, 'native', 'build', 'starlab_kernels.node');
    if (existsSync(path)) return path;
  }
  return null;
}

function loadAddon(): NativeKernels | null {
  if (process.env.STARLAB_NATIVE_KERNELS === '0') return null;
  const path = addonPath();
  if (!path) return null;
  // Idle OpenMP threads sleep instead of spinning (read when the runtime loads): spinning takes
  // a core from the other jobs of a shared machine, and from this process's own threads.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  let loaded: NativeKernels;
  try {
    loaded = require(path) as NativeKernels;
  } catch {
    return null; // built for another Node or CPU: the wasm kernels stay
  }
  // STARLAB_NATIVE_VECTORS=256 or 128 runs a narrower machine's kernel (benches compare them;
  // the sums, and so the results, are the same in every width). An addon built before it had no
  // widths takes none.
  const bits = Number(process.env.STARLAB_NATIVE_VECTORS);
  if ((VECTOR_BITS as readonly number[]).includes(bits) && typeof loaded.setVectorBits === 'function') loaded.setVectorBits(bits);
  return loaded;
}

let installed = false;
/** Threads the native kernels run on; set by installNativeKernels. */
let nativeThreads = 1;
/** True while withWasmMatMul runs: products go to the wasm kernel (specs compare the two). */
let bypass = false;
/** Products the native kernel ran (specs check it really ran). */
let nativeProducts = 0;
let addon: NativeKernels | null | undefined;

/** Whether the addon is built and loads here (it is loaded once). */
export function nativeKernelsAvailable(): boolean {
  if (addon === undefined) addon = loadAddon();
  return addon !== null;
}

/**
 * Replaces the wasm backend's BatchMatMul by the native addon's for float32 products without
 * transposes and with equal batch shapes (every product the model runs); anything else goes to
 * the wasm kernel as before. The addon reads and writes the wasm heap in place and reproduces the
 * wasm kernel's summation order, so results are bit-for-bit the same, in a fraction of the time
 * (docs/training-speed.md). Returns whether native kernels are in use; without the addon (it did
 * not build, or STARLAB_NATIVE_KERNELS=0) nothing changes.
 */
export function installNativeKernels(threads: number): boolean {
  if (installed) return true;
  if (tf.getBackend() !== 'wasm' || !nativeKernelsAvailable()) return false;
  const native = addon!;
  const wasmKernel = tf.getKernel('BatchMatMul', 'wasm');
  if (!wasmKernel) return false;
  nativeThreads = threads;
  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    kernelFunc: (args) => {
      const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
      const batchShape = a.shape.slice(0, -2);
      if (bypass || transposeA || transposeB || a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length !== b.shape.length || batchShape.some((d, i) => d !== b.shape[i])) {
        return wasmKernel.kernelFunc(args);
      }
      const [M, K] = a.shape.slice(-2);
      const [K2, N] = b.shape.slice(-2);
      if (K !== K2) return wasmKernel.kernelFunc(args);
      const backend = args.backend as unknown as WasmBackend;
      const batch = batchShape.reduce((x, y) => x * y, 1);
      const out = backend.makeOutput([...batchShape, M, N], 'float32');
      if (M * N === 0) return out;
      // Read after makeOutput: allocating may have grown the heap and replaced its view.
      const heap = backend.wasm.HEAPF32;
      const at = (t: tf.TensorInfo) => backend.dataIdMap.get(t.dataId).memoryOffset / 4;
      nativeProducts++;
      native.matmul(heap, at(a), at(b), at(out), batch, M, K, N, batch > 1 ? WASM_BATCH_K_BLOCK : Math.max(1, K), nativeThreads);
      return out;
    },
  });
  installed = true;
  return true;
}

export function nativeKernelsInstalled(): boolean {
  return installed;
}

export function nativeProductCount(): number {
  return nativeProducts;
}

/** Runs f with the wasm kernel doing every matrix product (the reference the native one must equal). */
export function withWasmMatMul<T>(f: () => T): T {
  bypass = true;
  try {
    return f();
  } finally {
    bypass = false;
  }
}

/**
 * Caps the native kernels' vectors at `bits` (never wider than the CPU's); returns the width in
 * use. The results do not depend on it.
 */
export function setNativeVectorBits(bits: (typeof VECTOR_BITS)[number]): number {
  if (!nativeKernelsAvailable()) return 0;
  return addon!.setVectorBits(bits);
}

/** Changes the native kernels' thread count (the results do not depend on it). */
export function setNativeThreads(threads: number): void {
  nativeThreads = threads;
}

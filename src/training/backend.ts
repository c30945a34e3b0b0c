import * as tf from '@tensorflow/tfjs';
import { availableParallelism } from 'node:os';
import { installNativeKernels, nativeKernelsAvailable, nativeKernelsInstalled } from './native-kernels';
import { installSharedBuffers } from './wasm-shared-buffers';
import { enableWasmThreads, withThreadPoolOf } from './wasm-threads';

/** TensorFlow.js backends in order of preference (docs/training.md, "Backends"). */
export const BACKEND_PREFERENCE = ['tfjs-node-gpu', 'tfjs-node', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_PREFERENCE)[number];
export type BackendChoice = BackendName | 'auto';

/** Backend names as TensorFlow.js registers them. */
const TF_BACKEND: Record<BackendName, string> = {
  'tfjs-node-gpu': 'tensorflow',
  'tfjs-node': 'tensorflow',
  wasm: 'wasm',
  cpu: 'cpu',
};

/**
 * The native packages download libtensorflow at install time, which fails on machines without
 * internet; they are optionalDependencies, so a failed install simply leaves them absent.
 * A guarded require turns "absent or broken" into "not available".
 */
function tryRequire(moduleName: string): boolean {
  try {
    require(moduleName);
    return true;
  } catch {
    return false;
  }
}

const loaders: Record<BackendName, () => boolean> = {
  'tfjs-node-gpu': () => tryRequire('@tensorflow/tfjs-node-gpu'),
  'tfjs-node': () => tryRequire('@tensorflow/tfjs-node'),
  wasm: () => tryRequire('@tensorflow/tfjs-backend-wasm') && (wasmThreads() === 1 || enableWasmThreads(wasmThreads()) || true),
  cpu: () => true,
};

let active: BackendName | null = null;

const PROCESS_EVENTS = ['unhandledRejection', 'uncaughtException'] as const;

/**
 * Runs `load` and removes the process-wide handlers it added. The wasm backend is an Emscripten
 * build, which installs an `unhandledRejection` handler that rethrows: with it, a rejection the
 * process chose to tolerate (src/worker.ts logs a connection failure Prisma leaves unhandled and
 * goes on) kills the process anyway, orphaning its training child. The process's own handlers
 * decide what is fatal.
 */
async function keepingProcessHandlers<T>(load: () => Promise<T>): Promise<T> {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(PROCESS_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  try {
    return await load();
  } finally {
    for (const event of PROCESS_EVENTS) {
      for (const listener of emitter.listeners(event)) if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
}

/**
 * Selects and initialises a backend once per process. `auto` walks BACKEND_PREFERENCE and takes
 * the first that loads; a named backend that cannot load is an error, not a silent fallback.
 * Returns the backend actually in use, which callers log and record per job.
 */
export async function initBackend(
  choice: BackendChoice = 'auto',
  log: (message: string) => void = () => undefined,
): Promise<BackendName> {
  if (active) {
    if (choice !== 'auto' && choice !== active) {
      throw new Error(`backend ${active} already initialised in this process; cannot switch to ${choice}`);
    }
    return active;
  }
  const candidates = choice === 'auto' ? BACKEND_PREFERENCE : [choice];
  for (const name of candidates) {
    if (!loaders[name]()) continue;
    const threads = name === 'wasm' ? wasmThreads() : 1;
    const loaded = await keepingProcessHandlers(async () => {
      if (!(await withThreadPoolOf(threads, () => tf.setBackend(TF_BACKEND[name])))) return false;
      await tf.ready();
      return true;
    });
    if (!loaded) continue;
    if (name === 'wasm') installSharedBuffers();
    if (name === 'wasm' && installNativeKernels(requestedThreads())) log(`native matMul kernels on ${requestedThreads()} thread(s)`);
    active = name;
    log(`tensorflow.js backend: ${name}`);
    return name;
  }
  throw new Error(`backend ${choice} is not available on this machine`);
}

export function activeBackend(): BackendName | null {
  return active;
}

const MAX_THREADS = 64;

/**
 * Threads a process trains with: env STARLAB_TRAINING_THREADS, else every core, except under Jest,
 * whose workers already take a core each (two workers on two cores would otherwise run four
 * compute threads and slow each other down).
 */
export function requestedThreads(): number {
  const raw = process.env.STARLAB_TRAINING_THREADS;
  if (raw === undefined || raw === '') return process.env.JEST_WORKER_ID ? 1 : availableParallelism();
  const asked = Number(raw);
  if (!/^\d+$/.test(raw) || asked < 1 || asked > MAX_THREADS) throw new Error(`STARLAB_TRAINING_THREADS must be an integer in [1, ${MAX_THREADS}] (got "${raw}")`);
  return asked;
}

/**
 * A worker trains each slot's job in a child process: each child gets its share of the cores
 * (at least one) through the environment it inherits, unless the operator set the count or Jest
 * runs the worker (its own rule, one thread, holds).
 */
export function shareCoresAmong(processes: number): void {
  if (process.env.STARLAB_TRAINING_THREADS || process.env.JEST_WORKER_ID) return;
  process.env.STARLAB_TRAINING_THREADS = String(Math.max(1, Math.floor(availableParallelism() / Math.max(1, processes))));
}

/**
 * Threads of the wasm module itself: one when the native kernels take its matrix products (they
 * run their own threads, and the wasm threads would then mostly wait), else those requested.
 */
function wasmThreads(): number {
  return nativeKernelsAvailable() ? 1 : requestedThreads();
}

/** Threads the active backend really computes its matrix products with. */
export function backendThreads(): number {
  if (tf.getBackend() !== 'wasm') return 1;
  if (nativeKernelsInstalled()) return requestedThreads();
  const wasm = (tf.backend() as unknown as { wasm: { tfjs: { getThreadsCount(): number } } }).wasm;
  return wasm.tfjs.getThreadsCount();
}

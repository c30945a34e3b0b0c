import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';

const WASM_OUT = '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd';
/** The worker's branch that loads the main script: a path it reads, or a Blob it cannot read in Node. */
const LOAD_MAIN_SCRIPT = 'if(typeof e.data.urlOrBlob=="string"){importScripts(e.data.urlOrBlob)}else{var objectUrl=URL.createObjectURL(e.data.urlOrBlob);importScripts(objectUrl);URL.revokeObjectURL(objectUrl)}';

let enabled = false;

/**
 * Lets tfjs-backend-wasm's threaded build run in Node. Its pthreads are emscripten workers made
 * from a `blob:` URL, which Node's Worker refuses (ERR_WORKER_PATH), and which then load the main
 * script from a Blob they cannot read; tfjs therefore reports no thread support in Node. Here the
 * worker script is written to a file, told to load the module from its file in the package, and
 * URL.createObjectURL hands out that file's path for exactly that Blob. Call before the wasm
 * backend initialises; false (nothing changed) when the package's worker is not the one expected.
 */
export function enableWasmThreads(threads: number): boolean {
  if (enabled) return true;
  const wasm = require('@tensorflow/tfjs-backend-wasm') as { setThreadsCount(n: number): void };
  const { wasmWorkerContents } = require(`${WASM_OUT}.worker.js`) as { wasmWorkerContents: string };
  if (!wasmWorkerContents.includes(LOAD_MAIN_SCRIPT)) return false;
  const dir = mkdtempSync(join(tmpdir(), 'starlab-wasm-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const workerPath = join(dir, 'worker.js');
  // As tfjs does for its Blob: the template literal turned the source's "\n" escapes into newlines.
  const escaped = wasmWorkerContents.replace(/\n/g, '\\n');
  writeFileSync(workerPath, escaped.replace(LOAD_MAIN_SCRIPT, `importScripts(${JSON.stringify(require.resolve(`${WASM_OUT}.js`))});`));
  // The Blob tfjs makes of the worker script: same type, same bytes.
  const blobSize = Buffer.byteLength(escaped);
  const createObjectURL = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (blob: Blob) => (blob.type === 'application/javascript' && blob.size === blobSize ? workerPath : createObjectURL(blob));
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
  wasm.setThreadsCount(threads);
  enabled = true;
  return true;
}

/**
 * Runs the wasm backend's initialisation with os.cpus() reporting two logical cores per thread
 * wanted: the module sizes its thread pool when it starts, at half of os.cpus().length (it takes
 * every x86 core for two hyper-threads), which on a 2-core machine is one thread whatever
 * setThreadsCount says.
 */
export async function withThreadPoolOf<T>(threads: number, init: () => Promise<T>): Promise<T> {
  const cpus = os.cpus;
  os.cpus = () => { const real = cpus(); return Array.from({ length: 2 * threads }, (_, i) => real[i % real.length]); };
  try {
    return await init();
  } finally {
    os.cpus = cpus;
  }
}

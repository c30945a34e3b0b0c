/**
 * bench/gpu: the reference workload (bench/reference-workload.ts) on the WebGPU backend against
 * the wasm backend in one run, at the default FrozenLake and Sokoban shapes; prints the adapter
 * WebGPU found and the backend tfjs really ran (it falls back silently when WebGPU does not come
 * up). Run through scripts/gpu-check.sh on a machine with an NVIDIA GPU.
 *
 *   npm run bench:gpu -- [--shapes frozenlake,sokoban] [--repeats 3]
 *
 * Needs the `webgpu` package (Dawn's Node bindings) and @tensorflow/tfjs-backend-webgpu, which are
 * not dependencies of the service: scripts/gpu-check.sh installs them.
 */
import * as tf from '@tensorflow/tfjs';
import { parseArgs } from 'node:util';
import { backendThreads, initBackend } from '../src/training/backend';
import { measureWorkload, workloadFor } from './reference-workload';

interface GpuAdapterInfo { vendor?: string; architecture?: string; device?: string; description?: string }
interface GpuAdapter { info?: GpuAdapterInfo; requestAdapterInfo?(): Promise<GpuAdapterInfo> }

/** Dawn's globals and navigator.gpu, as the browser has them (docs/training-speed.md, "GPU"). */
async function bringUpWebGpu(): Promise<string> {
  const { create, globals } = require('webgpu') as { create(flags: string[]): { requestAdapter(): Promise<GpuAdapter | null> }; globals: object };
  Object.assign(globalThis, globals);
  const gpu = create([]);
  Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter: Dawn needs Vulkan (libvulkan1 and the NVIDIA driver\'s ICD)');
  const info = adapter.info ?? (await adapter.requestAdapterInfo?.()) ?? {};
  require('@tensorflow/tfjs-backend-webgpu');
  return [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' / ') || 'unnamed adapter';
}

async function main() {
  const { values } = parseArgs({ options: { shapes: { type: 'string', default: 'frozenlake,sokoban' }, repeats: { type: 'string', default: '3' } } });
  const shapes = values.shapes.split(',');
  await initBackend('wasm');
  const workloads = await Promise.all(shapes.map((s) => workloadFor(s, Number(values.repeats))));
  const wasm = workloads.map(measureWorkload);
  const wasmThreads = backendThreads();
  const adapter = await bringUpWebGpu();
  const ok = await tf.setBackend('webgpu');
  await tf.ready();
  console.log(`WebGPU adapter: ${adapter}; tfjs backend now: ${tf.getBackend()} (setBackend('webgpu') ${ok ? 'succeeded' : 'failed'})`);
  if (tf.getBackend() !== 'webgpu') throw new Error('the WebGPU backend did not come up');
  console.log('| shape | backend | update tokens/s | generation tokens/s |\n|---|---|---|---|');
  shapes.forEach((shape, i) => {
    const gpu = measureWorkload(workloads[i]);
    console.log(`| ${shape} | wasm (${wasmThreads} threads) | ${wasm[i].updateTokensPerS.toFixed(0)} | ${wasm[i].generationTokensPerS.toFixed(0)} |`);
    console.log(`| ${shape} | webgpu | ${gpu.updateTokensPerS.toFixed(0)} | ${gpu.generationTokensPerS.toFixed(0)} |`);
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/**
 * bench/reference: the project's trainer side by side with PyTorch on OpenBLAS (bench/reference.py)
 * on the same policy, update and batched generation, at the default FrozenLake and Sokoban shapes
 * from demonstrations, with the same number of threads; then where a default step's time goes
 * (bench/step-profile.ts) and the top kernels of the update and of generation.
 *
 *   npm run bench:reference -- [--threads 2] [--shapes frozenlake,sokoban] [--repeats 3]
 *                              [--no-torch] [--no-profile]
 *
 * `--shapes largest` measures the largest job the bounds allow (bench/reference-workload.ts) and
 * its top kernels.
 *
 * PyTorch is a reference for this bench only: python3-torch and libopenblas0-pthread from Debian,
 * installed here when missing (as root), never a dependency of the service.
 */
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backendThreads, initBackend } from '../src/training/backend';
import { generationStep, measureWorkload, updateStep, Workload, workloadFor } from './reference-workload';
import { profileDefaultStep } from './step-profile';

const PYTHON = '/usr/bin/python3';

/** python3-torch with OpenBLAS, installed from Debian when missing; false when it cannot be. */
function ensureTorch(): boolean {
  const has = () => spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0 && spawnSync('dpkg', ['-s', 'libopenblas0-pthread'], { stdio: 'ignore' }).status === 0;
  if (has()) return true;
  if (process.getuid?.() !== 0) {
    console.error('PyTorch reference skipped: run `apt-get install python3-torch libopenblas0-pthread` as root');
    return false;
  }
  console.error('installing python3-torch and libopenblas0-pthread from Debian (bench reference only)…');
  spawnSync('apt-get', ['install', '-y', '-q', 'python3-torch', 'libopenblas0-pthread'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return has();
}

function torchSide(w: Workload, threads: number): Record<string, number | string> {
  const config = JSON.stringify({ ...w.model, critic: w.critic, updateRows: w.updateRows, updateLength: w.updateLength, genRows: w.genRows, promptLength: w.promptLength, newTokens: w.newTokens, repeats: w.repeats, threads });
  const n = String(threads);
  const run = spawnSync(PYTHON, [join(__dirname, 'reference.py'), config], { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: n, OPENBLAS_NUM_THREADS: n, MKL_NUM_THREADS: n } });
  if (run.status !== 0) throw new Error(`reference.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

/** Kernel names by total ms over one call of `f` (after a warm call), the top `n`. */
async function topKernels(f: () => void, n: number): Promise<string> {
  f();
  const info = await tf.profile(f);
  const byName = new Map<string, number>();
  // tfjs records a custom-gradient op (ops.ts's matMul) as "unnamed scope", timed around the
  // kernels inside it, which are counted on their own: left out, so the shares add up.
  for (const k of info.kernels.filter((k) => k.name !== 'unnamed scope')) byName.set(k.name, (byName.get(k.name) ?? 0) + (k.kernelTimeMs as number));
  const total = [...byName.values()].reduce((a, b) => a + b, 0);
  return [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms (${((100 * ms) / total).toFixed(0)}%)`).join(', ') + ` — ${info.kernels.length} kernel calls in all, ${total.toFixed(0)} ms`;
}

async function main() {
  const { values } = parseArgs({ options: { threads: { type: 'string', default: '2' }, shapes: { type: 'string', default: 'frozenlake,sokoban' }, repeats: { type: 'string', default: '3' }, 'no-torch': { type: 'boolean', default: false }, 'no-profile': { type: 'boolean', default: false } } });
  const threads = Number(values.threads);
  process.env.STARLAB_TRAINING_THREADS = String(threads);
  const backend = await initBackend();
  const got = backendThreads();
  console.log(`trainer: backend ${backend} (${tf.getBackend()}), ${got} thread${got === 1 ? '' : 's'} (asked ${threads}); load ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const torch = !values['no-torch'] && ensureTorch();
  const rows: string[] = ['| shape | side | backend | threads | update tokens/s | update ms | update tokens/CPU-s | generation tokens/s | generation ms | generation tokens/CPU-s |', '|---|---|---|---|---|---|---|---|---|---|'];
  const ratios: string[] = [];
  for (const shape of values.shapes.split(',')) {
    const w = await workloadFor(shape, Number(values.repeats));
    const label = `${shape} (d ${w.model.dModel}, ${w.model.layers} layers, ${w.model.heads} heads${w.model.gridPositions ? ', grid' : ''}${w.critic ? ', critic' : ''}; update ${w.updateRows}×${w.updateLength}, generation ${w.genRows}×(${w.promptLength}+${w.newTokens}))`;
    const ours = measureWorkload(w);
    const cells = (t: Record<string, number | string>) => ['updateTokensPerS', 'updateMs', 'updateTokensPerCpuS', 'generationTokensPerS', 'generationMs', 'generationTokensPerCpuS'].map((k) => Number(t[k]).toFixed(0)).join(' | ');
    rows.push(`| ${label} | StarLab | ${backend} | ${got} | ${cells({ ...ours })} |`);
    if (torch) {
      const ref = torchSide(w, threads);
      rows.push(`| ${shape} | PyTorch | ${ref.backend} (${ref.blas}) | ${ref.threads} | ${cells(ref)} |`);
      const ratio = (k: keyof typeof ours) => (ours[k] / Number(ref[k])).toFixed(2);
      ratios.push(`${shape}: update ${ratio('updateTokensPerS')}× PyTorch (per CPU-second ${ratio('updateTokensPerCpuS')}×), generation ${ratio('generationTokensPerS')}× (per CPU-second ${ratio('generationTokensPerCpuS')}×)`);
    }
    if (!values['no-profile'] && (shape === 'frozenlake' || shape === 'largest')) {
      const update = updateStep({ ...w, repeats: 1 });
      console.log(`top kernels, ${shape} update: ${await topKernels(update.step, 8)}`);
      update.dispose();
      const generation = generationStep({ ...w, repeats: 1 });
      console.log(`top kernels, ${shape} generation: ${await topKernels(generation.step, 8)}`);
      generation.dispose();
    }
  }
  console.log(rows.join('\n'));
  for (const r of ratios) console.log(r);
  if (!values['no-profile']) console.log(await profileDefaultStep());
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/**
 * bench/throughput: per available TensorFlow.js backend and preset, the default FrozenLake job's
 * median rollout tokens/s, update ms per step, whole steps/s and peak memory per step (the
 * backend's heap high-water mark and the process's peak RSS) over several runs; plus, in the
 * same run, the two measured design choices as ratios against their reference: incremental
 * decoding with the KV cache vs recomputing the context, and the explicit-transpose matMul
 * backward vs tfjs's own (transposeA/B) on wasm.
 *
 *   npm run bench:throughput -- [--runs 3] [--steps 4] [--presets starpo-s,starpo-ppo]
 *                               [--backends wasm,cpu,tfjs-node,tfjs-node-gpu]
 */
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { BackendName, initBackend } from '../src/training/backend';
import { matMul } from '../src/training/policy/ops';
import { TransformerLM } from '../src/training/policy/transformer';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import { timedSeconds } from './reference-workload';
import { TYPESCRIPT_LOADER as REGISTER } from '../src/repositories/typescript-child';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The default FrozenLake job (8×16 rollouts, whole-episode history), warm-up shortened. */
const specFor = (preset: string, steps: number, seed: number) =>
  parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: preset }, training: { steps, seed, evalEvery: 0, evalEpisodes: 1, checkpointEvery: 0, warmup: { steps: 40 } } });

/** The backend's memory high-water mark in MB: the wasm heap only grows; elsewhere the live tensor bytes. */
function backendPeakMb(): number {
  const wasm = (tf.backend() as unknown as { wasm?: { HEAPU8: Uint8Array } }).wasm;
  return (wasm ? wasm.HEAPU8.length : tf.memory().numBytes) / 2 ** 20;
}

async function measureBackend(backend: BackendName, preset: string, runs: number, steps: number) {
  await initBackend(backend);
  const perRun: { tokensPerS: number; updateMs: number; stepsPerS: number; heapMb: number; rssMb: number }[] = [];
  for (let run = 0; run < runs; run++) {
    const trainer = await Trainer.create(specFor(preset, steps + 1, run + 1), { backend });
    const rows: Record<string, number>[] = [];
    const peaks: { heapMb: number; rssMb: number }[] = [];
    await trainer.run({
      onStep: (step, m) => {
        if (step < 2) return; // step 1 warms kernels up
        rows.push(m);
        peaks.push({ heapMb: backendPeakMb(), rssMb: process.resourceUsage().maxRSS / 1024 });
        console.error(`${backend} ${preset} run ${run + 1} step ${step}: update ${m['perf/update_ms']} ms, heap ${peaks.at(-1)!.heapMb.toFixed(0)} MB, peak RSS ${peaks.at(-1)!.rssMb.toFixed(0)} MB`);
      },
    });
    trainer.dispose();
    perRun.push({
      tokensPerS: median(rows.map((m) => m['perf/tokens_per_s'])),
      updateMs: median(rows.map((m) => m['perf/update_ms'])),
      stepsPerS: 1000 / median(rows.map((m) => m['perf/step_ms'])),
      heapMb: Math.max(...peaks.map((p) => p.heapMb)),
      rssMb: Math.max(...peaks.map((p) => p.rssMb)),
    });
  }
  return {
    backend,
    preset,
    tokensPerS: median(perRun.map((r) => r.tokensPerS)),
    updateMs: median(perRun.map((r) => r.updateMs)),
    stepsPerS: median(perRun.map((r) => r.stepsPerS)),
    heapMb: Math.max(...perRun.map((r) => r.heapMb)),
    rssMb: Math.max(...perRun.map((r) => r.rssMb)),
  };
}

const timeMs = (repeats: number, f: () => void) => timedSeconds(repeats, f) * 1000;

/** Reference comparisons on wasm, measured in this run. */
async function measureDesignChoices() {
  await initBackend('wasm');
  const model = new TransformerLM({ vocabSize: 33, contextLength: 192, layers: 2, dModel: 64, heads: 2, ffnMultiplier: 4 }, 1);
  const batch = 64;
  const prompt = Array.from({ length: 150 }, (_, i) => 1 + (i % 30));
  // One decode step with the cache vs one full forward over the whole context.
  const { logits, cache } = model.prefill(Array.from({ length: batch }, () => prompt));
  logits.dispose();
  let current = cache;
  const cached = timeMs(10, () => {
    const out = model.decodeStep(current, Array(batch).fill(3));
    out.logits.dataSync();
    out.logits.dispose();
    current = out.cache;
  });
  const tokens = tf.tensor2d(Array.from({ length: batch }, () => [...prompt, 3]), [batch, prompt.length + 1], 'int32');
  const recompute = timeMs(5, () => tf.tidy(() => model.forward(tokens).logits.dataSync()));
  // Backward of a 3300×32 · 32×128 layer: our matMul vs tfjs's built-in gradient.
  const x = tf.variable(tf.randomNormal([3300, 32]));
  const w = tf.variable(tf.randomNormal([32, 128]));
  const backward = (mm: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor) => () => {
    const { value, grads } = tf.variableGrads(() => tf.sum(mm(x, w)) as tf.Scalar, [x, w]);
    value.dataSync();
    tf.dispose([value, ...Object.values(grads)]);
  };
  const ours = timeMs(10, backward((a, b) => matMul(a, b)));
  const builtin = timeMs(10, backward((a, b) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D)));
  return { cachedDecodeMs: cached, recomputeMs: recompute, oursBackwardMs: ours, builtinBackwardMs: builtin };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      steps: { type: 'string', default: '4' },
      // The pure-JS cpu backend is the last-resort fallback: one run of this preset on it took over
      // ten minutes here, so it is measured only when asked for (--backends ...,cpu).
      backends: { type: 'string', default: 'tfjs-node-gpu,tfjs-node,wasm' },
      presets: { type: 'string', default: 'starpo-s,starpo-ppo' },
      preset: { type: 'string' },
      child: { type: 'string' },
    },
  });
  if (values.child === 'design') {
    console.log(JSON.stringify(await measureDesignChoices()));
    return;
  }
  if (values.child) {
    console.log(JSON.stringify(await measureBackend(values.child as BackendName, values.preset!, Number(values.runs), Number(values.steps))));
    return;
  }
  // One process per backend and preset: a process initialises exactly one backend, and its peak RSS is its own.
  const child = (arg: string, preset = '') => {
    const out = spawnSync(process.execPath, ['-r', REGISTER, __filename, '--child', arg, '--preset', preset, '--runs', values.runs!, '--steps', values.steps!], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const last = out.stdout.trim().split('\n').pop() ?? '';
    return out.status === 0 && last.startsWith('{') ? JSON.parse(last) : null;
  };
  const example = specFor('starpo-s', 1, 1);
  const { dModel, layers, contextLength } = example.model.config;
  console.log(`Default FrozenLake job (d=${dModel}, ${layers} layers, context ${contextLength}, 8×16 rollouts, whole-episode history): median of ${values.runs} runs × ${values.steps} steps\n`);
  console.log('backend          preset        rollout tokens/s   update ms/step   steps/s   peak heap MB   peak RSS MB   vs wasm (steps/s)');
  const results = values.backends!.split(',').flatMap((b) => values.presets!.split(',').map((preset) => ({ backend: b, preset, result: child(b, preset) })));
  for (const { backend, preset, result } of results) {
    if (!result) {
      console.log(`${backend.padEnd(16)} ${preset.padEnd(13)} not available on this machine`);
      continue;
    }
    const wasm = results.find((r) => r.backend === 'wasm' && r.preset === preset)?.result;
    const ratio = wasm ? (result.stepsPerS / wasm.stepsPerS).toFixed(2) + '×' : '–';
    console.log(
      `${backend.padEnd(16)} ${preset.padEnd(13)} ${result.tokensPerS.toFixed(0).padStart(16)} ${result.updateMs.toFixed(0).padStart(16)} ${result.stepsPerS.toFixed(3).padStart(9)} ${result.heapMb.toFixed(0).padStart(14)} ${result.rssMb.toFixed(0).padStart(13)}   ${ratio}`,
    );
  }
  const design = child('design');
  if (design) {
    console.log('\nwasm, measured in this run:');
    console.log(`  decode 1 token, batch 64, 150-token context: KV cache ${design.cachedDecodeMs.toFixed(1)} ms vs recompute ${design.recomputeMs.toFixed(1)} ms  → ${(design.recomputeMs / design.cachedDecodeMs).toFixed(1)}×`);
    console.log(`  backward of 3300×32·32×128: explicit transposes ${design.oursBackwardMs.toFixed(1)} ms vs tfjs built-in ${design.builtinBackwardMs.toFixed(1)} ms  → ${(design.builtinBackwardMs / design.oursBackwardMs).toFixed(1)}×`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

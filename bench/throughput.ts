/**
 * bench/throughput: per available TensorFlow.js backend, the FrozenLake `starpo-s` preset's
 * median rollout tokens/s, update ms per step and whole steps/s over several runs; plus, in
 * the same run, the two measured design choices as ratios against their reference:
 * incremental decoding with the KV cache vs recomputing the context, and the explicit-transpose
 * matMul backward vs tfjs's own (transposeA/B) on wasm.
 *
 *   npm run bench:throughput -- [--runs 3] [--steps 4] [--backends wasm,cpu,tfjs-node,tfjs-node-gpu]
 */
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { BackendName, initBackend } from '../src/training/backend';
import { matMul } from '../src/training/policy/ops';
import { TransformerLM } from '../src/training/policy/transformer';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The FrozenLake starpo-s preset with its defaults (d=64, 8×16 rollouts, full history). */
const SPEC = { environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' }, training: { evalEvery: 0, evalEpisodes: 1, checkpointEvery: 0, warmup: { steps: 40 } } };

async function measureBackend(backend: BackendName, runs: number, steps: number) {
  await initBackend(backend);
  const perRun: { tokensPerS: number; updateMs: number; stepsPerS: number }[] = [];
  for (let run = 0; run < runs; run++) {
    const spec = parseJobSpec({ ...SPEC, training: { ...SPEC.training, steps: steps + 1, seed: run + 1 } });
    const trainer = await Trainer.create(spec, { backend });
    const rows: Record<string, number>[] = [];
    await trainer.run({ onStep: (step, m) => void (step >= 2 && rows.push(m)) }); // step 1 warms kernels up
    trainer.dispose();
    perRun.push({
      tokensPerS: median(rows.map((m) => m['perf/tokens_per_s'])),
      updateMs: median(rows.map((m) => m['perf/update_ms'])),
      stepsPerS: 1000 / median(rows.map((m) => m['perf/step_ms'])),
    });
  }
  return {
    backend,
    tokensPerS: median(perRun.map((r) => r.tokensPerS)),
    updateMs: median(perRun.map((r) => r.updateMs)),
    stepsPerS: median(perRun.map((r) => r.stepsPerS)),
  };
}

function timeMs(repeats: number, f: () => void): number {
  f();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(times);
}

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
      child: { type: 'string' },
    },
  });
  if (values.child === 'design') {
    console.log(JSON.stringify(await measureDesignChoices()));
    return;
  }
  if (values.child) {
    console.log(JSON.stringify(await measureBackend(values.child as BackendName, Number(values.runs), Number(values.steps))));
    return;
  }
  // One process per backend: a process initialises exactly one backend.
  const child = (arg: string) => {
    const out = spawnSync(process.execPath, ['-r', '@swc-node/register', __filename, '--child', arg, '--runs', values.runs!, '--steps', values.steps!], { encoding: 'utf8' });
    const last = out.stdout.trim().split('\n').pop() ?? '';
    return out.status === 0 && last.startsWith('{') ? JSON.parse(last) : null;
  };
  console.log(`FrozenLake starpo-s preset (d=64, 2 layers, 8×16 rollouts, full history): median of ${values.runs} runs × ${values.steps} steps\n`);
  console.log('backend          rollout tokens/s   update ms/step   steps/s   vs wasm (steps/s)');
  const results = values.backends!.split(',').map((b) => ({ backend: b, result: child(b) }));
  const wasm = results.find((r) => r.backend === 'wasm')?.result;
  for (const { backend, result } of results) {
    if (!result) {
      console.log(`${backend.padEnd(16)} not available on this machine`);
      continue;
    }
    const ratio = wasm ? (result.stepsPerS / wasm.stepsPerS).toFixed(2) + '×' : '–';
    console.log(`${backend.padEnd(16)} ${result.tokensPerS.toFixed(0).padStart(16)} ${result.updateMs.toFixed(0).padStart(16)} ${result.stepsPerS.toFixed(3).padStart(9)}   ${ratio}`);
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

/**
 * bench/warmup-screen: a quick screen of warm-up levers. For each variant (spec sections merged
 * over a default job, as a bench/learning column's overrides), it trains the job's warm-up only
 * and evaluates it under RAGEN's protocol (256 seeds, temperature 0.5): the figure that decides
 * which lever earns a full bench/learning run over 3 seeds. The warm-up goes into the bench
 * warm-up cache (bench/warmup-cache.ts), so that run reuses it. One process, variants in turn;
 * each result is appended to `--out` as a JSON line.
 *
 *   npm run bench:warmup-screen -- --env frozenlake --config '{"slippery":false}' --seed 1 \
 *     --variants '{"grid positions":{"model":{"gridPositions":true}}}' [--out bench/results/warmup-screen.jsonl]
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { initBackend } from '../src/training/backend';
import { baselines } from '../src/training/experiment/baselines';
import { EVAL_METRICS, METRIC } from '../src/training/signals/step-metrics';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import { Column, RAGEN_PROTOCOL, RunKey, Warmup, keyId, specOf } from './learning-table';
import { benchWarmupStore } from './warmup-cache';

async function screen(env: string, envConfig: Record<string, unknown>, warmup: Warmup, seed: number, name: string, overrides: Column['overrides']) {
  // One RL step: the trainer stops right after the warm-up's evaluation (step 0).
  const key: RunKey = { revision: 0, env, envConfig, preset: 'starpo-s', warmup, seed, steps: 1, overrides, protocol: RAGEN_PROTOCOL };
  const spec = parseJobSpec(specOf(key));
  const started = Date.now();
  const trainer = await Trainer.create(spec, { warmupStore: benchWarmupStore() });
  let afterWarmup = NaN;
  let loss = NaN;
  let reused = false;
  await trainer.run({
    onStep: (step, metrics) => {
      if (step !== 0) return;
      afterWarmup = metrics[EVAL_METRICS.sampled.success];
      loss = metrics[METRIC.warmupLoss];
      reused = metrics['warmup/reused'] === 1;
    },
    shouldStop: () => !Number.isNaN(afterWarmup),
  });
  trainer.dispose();
  const { random, optimal } = await baselines(spec);
  return { id: keyId(key), key, variant: name, warmupSteps: spec.training.warmup.steps, afterWarmup, warmupLoss: loss, random, optimal, seconds: (Date.now() - started) / 1000, reused };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      env: { type: 'string', default: 'frozenlake' },
      config: { type: 'string', default: '{}' },
      warmup: { type: 'string', default: 'demonstrations' },
      seed: { type: 'string', default: '1' },
      variants: { type: 'string', default: '{"default":{}}' },
      out: { type: 'string', default: 'bench/results/warmup-screen.jsonl' },
    },
  });
  await initBackend('wasm');
  for (const [name, overrides] of Object.entries(JSON.parse(values.variants!) as Record<string, Column['overrides']>)) {
    const result = await screen(values.env!, JSON.parse(values.config!), values.warmup as Warmup, Number(values.seed), name, overrides);
    appendFileSync(values.out!, `${JSON.stringify(result)}\n`);
    console.log(`${name}: eval after the warm-up ${result.afterWarmup.toFixed(3)} (loss ${result.warmupLoss.toFixed(3)}, random ${result.random.toFixed(3)}) in ${Math.round(result.seconds)} s${result.reused ? ' (cached warm-up)' : ''}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

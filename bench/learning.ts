/**
 * bench/learning: the like-for-like learning table. For each row (environment and budget) and
 * column (warm-up kind, preset, overrides), eval success after the warm-up and after RL under
 * RAGEN's protocol (256 fixed seeds, temperature 0.5), next to a random well-formed agent on the
 * same seeds, the optimal policy (FrozenLake, exact dynamic programming) and RAGEN's published
 * StarPO-S figures. Each run is its own process (`--parallel` at a time); every finished run is
 * appended to `--out` keyed by every setting that changes it, so the table resumes where it
 * stopped and only missing runs are trained.
 *
 *   npm run bench:learning -- [--rows sokoban,frozenlake] [--columns format/starpo-s,...] [--seeds 1]
 *                             [--parallel 2] [--print] [--out bench/results/learning.jsonl]
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '../src/training/backend';
import { EVAL_METRICS, METRIC } from '../src/training/signals/step-metrics';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import { baselines } from './baselines';
import { COLUMNS, Column, ROWS, RunKey, keyId, runKey, specOf } from './learning-table';
import { printLearningTable } from './learning-print';

export interface LearningResult {
  id: string;
  key: RunKey;
  /** Eval success (sampled, RAGEN's protocol) by step; step 0 is right after the warm-up. */
  curve: Record<number, number>;
  afterWarmup: number;
  afterRl: number;
  /** Mean over the run's steps of the clip fractions (above zero when several minibatches act). */
  clipHigh: number;
  clipLow: number;
  random: number;
  optimal: number | null;
  backend: string;
  seconds: number;
}

async function runOne(key: RunKey): Promise<LearningResult> {
  await initBackend('wasm');
  const spec = parseJobSpec(specOf(key));
  const started = Date.now();
  const trainer = await Trainer.create(spec);
  const curve: Record<number, number> = {};
  const clips: [number, number][] = [];
  await trainer.run({
    onStep: (step, metrics) => {
      const success = metrics[EVAL_METRICS.sampled.success];
      if (success !== undefined) curve[step] = success;
      if (metrics[METRIC.clipFractionHigh] !== undefined) clips.push([metrics[METRIC.clipFractionHigh], metrics[METRIC.clipFractionLow]]);
    },
  });
  const backend = trainer.backend;
  trainer.dispose();
  const seconds = (Date.now() - started) / 1000;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    id: keyId(key),
    key,
    curve,
    afterWarmup: curve[0],
    afterRl: curve[key.steps],
    clipHigh: mean(clips.map((c) => c[0])),
    clipLow: mean(clips.map((c) => c[1])),
    ...baselines(spec),
    backend,
    seconds,
  };
}

function spawnRun(key: RunKey): Promise<LearningResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', __filename, '--run', JSON.stringify(key)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`run ${keyId(key)} exited ${code}`))));
  });
}

export function readResults(path: string): LearningResult[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as LearningResult);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      run: { type: 'string' },
      rows: { type: 'string', default: ROWS.map((r) => r.name).join(',') },
      columns: { type: 'string', default: COLUMNS.map((c) => c.name).join(',') },
      parallel: { type: 'string', default: '2' },
      seeds: { type: 'string' },
      print: { type: 'boolean', default: false },
      out: { type: 'string', default: 'bench/results/learning.jsonl' },
    },
  });
  if (values.run) {
    console.log(JSON.stringify(await runOne(JSON.parse(values.run))));
    return;
  }
  const rows = ROWS.filter((r) => values.rows!.split(',').includes(r.name));
  const columns: Column[] = COLUMNS.filter((c) => values.columns!.split(',').includes(c.name));
  const seeds = values.seeds?.split(',').map(Number);
  const keys = rows.flatMap((row) =>
    columns.filter((c) => c.warmup === 'format' || row.hasExpert).flatMap((c) => c.seeds.filter((seed) => !seeds || seeds.includes(seed)).map((seed) => runKey(row, c, seed))),
  );
  mkdirSync(dirname(values.out!), { recursive: true });
  const done = readResults(values.out!);
  const pending = values.print ? [] : keys.filter((key) => !done.some((d) => d.id === keyId(key)));
  console.log(`${keys.length} runs, ${keys.length - pending.length} already in ${values.out}; training ${pending.length}, ${values.parallel} at a time`);
  const queue = [...pending];
  await Promise.all(
    Array.from({ length: Number(values.parallel) }, async () => {
      for (let key = queue.shift(); key; key = queue.shift()) {
        const result = await spawnRun(key);
        appendFileSync(values.out!, `${JSON.stringify(result)}\n`);
        console.log(`${key.env} ${JSON.stringify(key.envConfig)} ${key.warmup}/${key.preset} ${JSON.stringify(key.overrides)} seed ${key.seed}: ${result.afterWarmup.toFixed(3)} → ${result.afterRl.toFixed(3)} (random ${result.random.toFixed(3)}) in ${Math.round(result.seconds)} s`);
        done.push(result);
      }
    }),
  );
  printLearningTable(rows, columns, done);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

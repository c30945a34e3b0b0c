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
import { parseArgs } from 'node:util';
import { EVAL_METRICS, METRIC } from '../src/training/signals/step-metrics';
import { baselines } from './baselines';
import { COLUMNS, Column, ROWS, RunKey, keyId, runKey, specOf } from './learning-table';
import { printLearningTable } from './learning-print';
import { spawnRun, trainJob, trainMissing } from './runs';

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
  const curve: Record<number, number> = {};
  const clips: [number, number][] = [];
  const { spec, backend, seconds } = await trainJob(specOf(key), (step, metrics) => {
    const success = metrics[EVAL_METRICS.sampled.success];
    if (success !== undefined) curve[step] = success;
    if (metrics[METRIC.clipFractionHigh] !== undefined) clips.push([metrics[METRIC.clipFractionHigh], metrics[METRIC.clipFractionLow]]);
  });
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
  const done = await trainMissing<RunKey, LearningResult>({
    keys,
    idOf: keyId,
    out: values.out!,
    parallel: Number(values.parallel),
    print: values.print!,
    train: (key) => spawnRun(__filename, key, keyId(key)),
    report: (key, result) =>
      console.log(`${key.env} ${JSON.stringify(key.envConfig)} ${key.warmup}/${key.preset} ${JSON.stringify(key.overrides)} seed ${key.seed}: ${result.afterWarmup.toFixed(3)} → ${result.afterRl.toFixed(3)} (random ${result.random.toFixed(3)}) in ${Math.round(result.seconds)} s`),
  });
  printLearningTable(rows, columns, done);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

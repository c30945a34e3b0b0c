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
import { METRIC } from '../src/training/signals/step-metrics';
import { COLUMNS, Column, ROWS, RunKey, keyId, runKey, specOf } from './learning-table';
import { printLearningTable } from './learning-print';
import { BenchResult, benchEntry, benchOptions, trainMissing, trainRun } from './runs';

export interface LearningResult extends BenchResult<RunKey> {
  /** Mean over the run's steps of the clip fractions (above zero when several minibatches act). */
  clipHigh: number;
  clipLow: number;
}

async function runOne(key: RunKey): Promise<LearningResult> {
  const clips: [number, number][] = [];
  const result = await trainRun(key, keyId(key), specOf(key), (_step, metrics) => {
    if (metrics[METRIC.clipFractionHigh] !== undefined) clips.push([metrics[METRIC.clipFractionHigh], metrics[METRIC.clipFractionLow]]);
  });
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return { ...result, clipHigh: mean(clips.map((c) => c[0])), clipLow: mean(clips.map((c) => c[1])) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { ...benchOptions({ rows: ROWS, columns: COLUMNS, out: 'bench/results/learning.jsonl' }), seeds: { type: 'string' } } });
  const rows = ROWS.filter((r) => values.rows!.split(',').includes(r.name));
  const columns: Column[] = COLUMNS.filter((c) => values.columns!.split(',').includes(c.name));
  const seeds = values.seeds?.split(',').map(Number);
  const keys = rows.flatMap((row) =>
    columns.filter((c) => c.warmup === 'format' || row.hasExpert).flatMap((c) => c.seeds.filter((seed) => !seeds || seeds.includes(seed)).map((seed) => runKey(row, c, seed))),
  );
  const done = await trainMissing<RunKey, LearningResult>({ script: __filename, keys, idOf: keyId, label: (key) => `${key.env} ${JSON.stringify(key.envConfig)} ${key.warmup}/${key.preset} ${JSON.stringify(key.overrides)} seed ${key.seed}`, values });
  printLearningTable(rows, columns, done);
}

if (require.main === module) benchEntry(runOne, main);

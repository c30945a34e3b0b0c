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
 *
 * A served row (SERVED_ROWS, e.g. `--rows guess-number`) runs only the columns it names, with its
 * example server started for the runs and stopped after.
 */
import { parseArgs } from 'node:util';
import { METRIC } from '../src/training/signals/step-metrics';
import { COLUMNS, Column, ROWS, RunKey, SERVED_COLUMNS, SERVED_ROWS, columnsOf, keyId, runKey, specOf } from './learning-table';
import { printLearningTable } from './learning-print';
import { BenchResult, benchEntry, benchOptions, trainMissing, trainRun } from './runs';
import { connectServed, servedExpert, startServed } from './served-env';
import type { EnvDefinition } from '../src/training/envs/types';

export interface LearningResult extends BenchResult<RunKey> {
  /** Mean over the run's steps of the clip fractions (above zero when several minibatches act). */
  clipHigh: number;
  clipLow: number;
  /** The environment's expert on the same evaluation seeds, where the row is served (its optimum is not computed). */
  expert?: number | null;
}

async function runOne(key: RunKey): Promise<LearningResult> {
  const clips: [number, number][] = [];
  const onStep = (_step: number, metrics: Record<string, number>) => {
    if (metrics[METRIC.clipFractionHigh] !== undefined) clips.push([metrics[METRIC.clipFractionHigh], metrics[METRIC.clipFractionLow]]);
  };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const clipped = (result: BenchResult<RunKey>) => ({ ...result, clipHigh: mean(clips.map((c) => c[0])), clipLow: mean(clips.map((c) => c[1])) });
  if (!SERVED_ROWS.some((row) => row.env === key.env)) return clipped(await trainRun(key, keyId(key), specOf(key), onStep));
  // A served row: its server (started by main) is connected in this process too.
  const served = await connectServed(specOf(key));
  try {
    const result = await trainRun(key, keyId(key, served.definition), served.spec, onStep, served.definition);
    return { ...clipped(result), expert: await servedExpert(served.spec, served.definition) };
  } finally {
    served.dispose();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { ...benchOptions({ rows: ROWS, columns: [...COLUMNS, ...SERVED_COLUMNS], out: 'bench/results/learning.jsonl' }), seeds: { type: 'string' } } });
  const rows = [...ROWS, ...SERVED_ROWS].filter((r) => values.rows!.split(',').includes(r.name));
  const selected = (c: Column) => values.columns!.split(',').includes(c.name);
  const columns: Column[] = [...COLUMNS, ...SERVED_COLUMNS].filter((c) => selected(c) && rows.some((row) => columnsOf(row).includes(c)));
  const seeds = values.seeds?.split(',').map(Number);
  const keysOf = (row: (typeof rows)[number]) => columnsOf(row).filter(selected).flatMap((c) => c.seeds.filter((seed) => !seeds || seeds.includes(seed)).map((seed) => runKey(row, c, seed)));
  const label = (key: RunKey) => `${key.env} ${JSON.stringify(key.envConfig)} ${key.warmup}/${key.preset} ${JSON.stringify(key.overrides)} seed ${key.seed}`;
  const train = (keys: RunKey[], served?: EnvDefinition) => trainMissing<RunKey, LearningResult>({ script: __filename, keys, idOf: (key) => keyId(key, served), label, values });
  let done = await train(rows.filter((row) => !row.serve).flatMap(keysOf));
  // A served row's runs need its server (and its ids its manifest): one row at a time, its server
  // started and stopped around its runs.
  const definitions = new Map<string, EnvDefinition>();
  const stops: (() => void | Promise<void>)[] = [];
  try {
    for (const row of rows.filter((r) => r.serve)) {
      stops.push(await startServed(row));
      const served = await connectServed(specOf(keysOf(row)[0] ?? runKey(row, columnsOf(row)[0], 1)));
      stops.push(served.dispose);
      definitions.set(row.name, served.definition);
      done = await train(keysOf(row), served.definition);
    }
    printLearningTable(rows, columns, done, definitions);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

if (require.main === module) benchEntry(runOne, main);

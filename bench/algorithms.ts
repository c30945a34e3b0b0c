/**
 * bench/algorithms: GRPO, DAPO, GiGPO, ARPO, AEPO and StarPO-S side by side on lookup-qa and on
 * non-slippery FrozenLake (bench/algorithms-table.ts), three seeds per cell, evaluated under
 * RAGEN's protocol (256 fixed seeds, temperature 0.5). It prints one table (eval success and
 * pass@k, distinct action sequences, entropy over training, branches per prompt, tool calls,
 * wall time, the random agent on the same seeds) and whether AEPO's three claims hold here
 * (bench/algorithms-print.ts). Each run is its own process (`--parallel` at a time); every
 * finished run is appended to `--out`, keyed by every setting that changes it, so the table
 * resumes where it stopped. A preset this code does not have yet is skipped and shown "–".
 *
 *   npm run bench:algorithms -- [--rows lookup-qa,frozenlake] [--columns starpo-grpo,dapo,...] [--seeds 1,2,3]
 *                               [--parallel 2] [--print] [--out bench/results/algorithms.jsonl]
 *                               [--steps N]   (a smoke run: N steps instead of the row's, keyed apart)
 */
import { parseArgs } from 'node:util';
import { METRIC } from '../src/training/signals/step-metrics';
import { COLUMNS, ROWS, RunKey, SEEDS, available, keyId, runKey, specOf } from './algorithms-table';
import { printAlgorithmsTable } from './algorithms-print';
import { BenchResult, benchEntry, benchOptions, trainMissing, trainRun } from './runs';

/**
 * Step series kept from each run, by the metric they come from. Branches come only from the tree
 * rollouts of arpo and aepo, tool calls only from tool environments; a series a run did not
 * report is absent.
 */
export const SERIES = {
  passAtK: METRIC.passAtK,
  entropy: METRIC.entropyMean,
  distinctActionSequences: METRIC.distinctActionSequences,
  branchesPerPrompt: METRIC.branchesPerPrompt,
  toolCalls: METRIC.toolCallsPerEpisode,
  toolSuccess: METRIC.toolSuccessRate,
} as const;
export type SeriesName = keyof typeof SERIES;

export interface AlgorithmResult extends BenchResult<RunKey> {
  /** Per RL step (index 0 is step 1), each series the run reported. */
  series: Partial<Record<SeriesName, number[]>>;
}

async function runOne(key: RunKey): Promise<AlgorithmResult> {
  const series: AlgorithmResult['series'] = {};
  const result = await trainRun(key, keyId(key), specOf(key), (step, metrics) => {
    if (step === 0) return;
    for (const [name, metric] of Object.entries(SERIES) as [SeriesName, string][]) {
      if (metrics[metric] !== undefined) (series[name] ??= []).push(metrics[metric]);
    }
  });
  return { ...result, series };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { ...benchOptions({ rows: ROWS, columns: COLUMNS, out: 'bench/results/algorithms.jsonl' }), seeds: { type: 'string', default: SEEDS.join(',') }, steps: { type: 'string' } },
  });
  const rows = ROWS.filter((r) => values.rows!.split(',').includes(r.name));
  const columns = COLUMNS.filter((c) => values.columns!.split(',').includes(c.name));
  const seeds = values.seeds!.split(',').map(Number);
  const steps = values.steps === undefined ? undefined : Number(values.steps);
  const missing = columns.filter((c) => !available(c));
  if (missing.length > 0) console.log(`skipped, no such preset yet: ${missing.map((c) => c.name).join(', ')}`);
  const keys = rows.flatMap((row) => columns.filter(available).flatMap((c) => seeds.map((seed) => runKey(row, c, seed, steps))));
  const done = await trainMissing<RunKey, AlgorithmResult>({ script: __filename, keys, idOf: keyId, label: (key) => `${key.env} ${JSON.stringify(key.envConfig)} ${key.preset} seed ${key.seed}`, values });
  printAlgorithmsTable(rows, columns, seeds, steps, done);
}

if (require.main === module) benchEntry(runOne, main);

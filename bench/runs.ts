/**
 * What the resumable benches (bench/learning, bench/algorithms) share: a run is keyed by every
 * setting that changes it plus a digest of the resolved spec it trains, trained in a child
 * process of its own (`--run <key>`), and appended as one JSON line to a committed results file,
 * so a table resumes where it stopped and only missing runs are trained.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { initBackend } from '../src/training/backend';
import { MONITOR_INPUTS, backtest } from '../src/training/signals/collapse';
import { EVAL_METRICS, type Metrics } from '../src/training/signals/step-metrics';
import { canonicalJson, specDigest } from '../src/training/experiment/digest';
import type { SeedOutcome } from '../src/training/experiment/cells';
import type { EnvDefinition } from '../src/training/envs/types';
import { baselines } from '../src/training/experiment/baselines';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import { benchWarmupStore } from './warmup-cache';
import { PARTIAL_EVERY, type PartialProgress, benchPartialRuns } from './partial-runs';
import { TYPESCRIPT_LOADER as REGISTER } from '../src/repositories/typescript-child';

/** What a bench's rows have in common: an environment with its config and an RL budget. */
export interface BenchRow {
  name: string;
  label: string;
  env: string;
  envConfig: Record<string, unknown>;
  /** RL steps of every run in the row. */
  steps: number;
}

/**
 * The identity of a stored result: the key and the digest of the resolved spec the run trains
 * (specDigest), so a change of any default (a recipe, a preset) makes the old result stale instead
 * of silently reused. An experiment's job of the same spec has the same digest.
 */
export function resultId(key: unknown, rawSpec: Record<string, unknown>, served?: EnvDefinition): string {
  return `${canonicalJson(key)}#${specDigest(rawSpec, served)}`;
}

/** What every stored run records; a bench adds its own figures. */
export interface BenchResult<K> {
  id: string;
  key: K;
  /** Eval success (sampled, RAGEN's protocol) by step; step 0 is right after the warm-up. */
  curve: Record<number, number>;
  afterWarmup: number;
  afterRl: number;
  /** The random agent (and FrozenLake's optimal policy) on the same evaluation seeds (src/training/experiment/baselines.ts). */
  random: number;
  optimal: number | null;
  backend: string;
  seconds: number;
  /** The warm-up came from the warm-up cache (bench/warmup-cache.ts): `seconds` is then the RL part alone. Absent in runs stored before the cache. */
  warmupReused?: boolean;
  /** The collapse warnings of severity `warning` or above the job's monitor raised (absent in runs stored before they were kept). */
  warnings?: { step: number; detector: string; severity: string }[];
  /**
   * Per RL step (index 0 is step 1), each metric the collapse monitor reads (MONITOR_INPUTS;
   * null where a step did not report it), so that later detectors can be replayed on the run
   * (`replayWarnings`). Absent in runs stored before it was kept.
   */
  monitor?: Record<string, (number | null)[]>;
  /** The steps after which the run was resumed from a partial run (bench/partial-runs.ts); absent when it ran in one process. */
  resumedAt?: number[];
}

/** A stored run as a results cell reads it (src/training/experiment/cells.ts). */
export function outcomeOf(result: Pick<BenchResult<{ seed: number }>, 'key' | 'afterWarmup' | 'afterRl'>): SeedOutcome {
  return { seed: result.key.seed, afterWarmup: result.afterWarmup, afterRl: result.afterRl };
}

/** The warnings (severity ≥ warning) today's detectors raise on a stored run, or what it raised when stored if it kept no monitor inputs. */
export function replayWarnings(result: Pick<BenchResult<unknown>, 'warnings' | 'monitor'>, taskChanges: readonly number[] = []): BenchResult<unknown>['warnings'] {
  if (!result.monitor) return result.warnings;
  const steps = Math.max(...Object.values(result.monitor).map((xs) => xs.length));
  const series = Array.from({ length: steps }, (_, i) => ({
    step: i + 1,
    metrics: Object.fromEntries(Object.entries(result.monitor!).flatMap(([name, xs]) => (xs[i] === null || xs[i] === undefined ? [] : [[name, xs[i]]]))),
  }));
  return backtest(series, [], taskChanges).filter((w) => w.severity !== 'info').map((w) => ({ step: w.step, detector: w.detector, severity: w.severity }));
}

/**
 * Trains one run on the wasm backend (as every stored run did), passing each step's metrics on.
 * Its warm-up comes from the warm-up cache when an earlier run trained the same one; not for a
 * served environment (`served`, the definition `rawSpec` names), whose warm-up depends on what the
 * server plays, which the cache's key does not hold. Every PARTIAL_EVERY steps it saves a partial
 * run (bench/partial-runs.ts), and a run that one saved resumes from it.
 */
export async function trainRun<K extends { steps: number }>(key: K, id: string, rawSpec: Record<string, unknown>, onStep: (step: number, metrics: Metrics) => void, served?: EnvDefinition): Promise<BenchResult<K>> {
  await initBackend('wasm');
  const spec = parseJobSpec(rawSpec, served);
  const started = Date.now();
  const partials = benchPartialRuns();
  const resumed = partials?.load(id) ?? null;
  // When checkpoints are taken changes nothing the run computes (the id keeps the spec's own).
  const trained = partials ? { ...spec, training: { ...spec.training, checkpointEvery: PARTIAL_EVERY } } : spec;
  const trainer = await Trainer.create(trained, { warmupStore: served ? undefined : benchWarmupStore(), environment: served, resumeFrom: resumed?.checkpoint });
  const progress: PartialProgress = resumed
    ? { ...resumed.progress, resumedAt: [...resumed.progress.resumedAt, resumed.progress.step] }
    : { step: 0, curve: {}, warnings: [], monitor: Object.fromEntries(MONITOR_INPUTS.map((name) => [name, []])), warmupReused: false, seconds: 0, resumedAt: [] };
  if (resumed) process.stderr.write(`${String(rawSpec.name)} #${id.slice(-6)}: resumed after step ${resumed.progress.step} (${partials!.path(id)})\n`);
  const { curve, warnings, monitor } = progress;
  const elapsed = () => progress.seconds + (Date.now() - started) / 1000;
  const run = trainer.run({
    onStep: (step, metrics) => {
      if (step === 0) progress.warmupReused = metrics['warmup/reused'] === 1;
      const success = metrics[EVAL_METRICS.sampled.success];
      if (success !== undefined) {
        curve[step] = success;
        // Progress on stderr (the parent passes it through): a long run is otherwise silent.
        process.stderr.write(`${String(rawSpec.name)} #${id.slice(-6)}: step ${step}/${key.steps} eval success ${success.toFixed(3)}\n`);
      }
      if (step > 0) for (const name of MONITOR_INPUTS) monitor[name][step - 1] = metrics[name] ?? null;
      onStep(step, metrics);
    },
    onWarnings: (step, raised) => {
      for (const w of raised) if (w.severity !== 'info') warnings.push({ step, detector: w.detector, severity: w.severity });
    },
    onCheckpoint: (step, bytes) => {
      if (step < key.steps) partials?.save(id, { ...progress, step, seconds: elapsed() }, bytes);
    },
  });
  await run.finally(() => trainer.dispose());
  const backend = trainer.backend;
  const seconds = elapsed();
  partials?.remove(id);
  const resumedAt = progress.resumedAt.length > 0 ? { resumedAt: progress.resumedAt } : {};
  return { id, key, curve, afterWarmup: curve[0], afterRl: curve[key.steps], ...(await baselines(spec, served)), backend, seconds, warmupReused: progress.warmupReused, warnings, monitor, ...resumedAt };
}

/** Runs `script --run <key>` in a child process and parses the last line it prints: the result. */
export function spawnRun<R>(script: string, key: unknown, label: string): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, script, '--run', JSON.stringify(key)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as R) : reject(new Error(`run ${label} exited ${code}`))));
  });
}

export function readResults<R>(path: string): R[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as R);
}

/**
 * Trains the keys whose id is not yet in `--out` (none with `--print`), `--parallel` child
 * processes of `script` at a time, appending each result as it finishes and printing it after
 * `label(key)`. Returns every result in the file (the new ones included).
 */
export async function trainMissing<K, R extends BenchResult<K>>(options: {
  script: string;
  keys: readonly K[];
  idOf: (key: K) => string;
  label: (key: K) => string;
  values: { out?: string; parallel?: string; print?: boolean };
}): Promise<R[]> {
  const { keys, idOf } = options;
  const out = options.values.out!;
  const parallel = Number(options.values.parallel);
  mkdirSync(dirname(out), { recursive: true });
  const done = readResults<R>(out);
  const missing = keys.filter((key) => !done.some((d) => d.id === idOf(key)));
  const pending = options.values.print ? [] : missing;
  console.log(`${keys.length} runs, ${keys.length - missing.length} already in ${out}; training ${pending.length}, ${parallel} at a time`);
  const queue = [...pending];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let key = queue.shift(); key; key = queue.shift()) {
        const result = await spawnRun<R>(options.script, key, idOf(key));
        appendFileSync(out, `${JSON.stringify(result)}\n`);
        console.log(`${options.label(key)}: ${result.afterWarmup.toFixed(3)} → ${result.afterRl.toFixed(3)} (random ${result.random.toFixed(3)}) in ${Math.round(result.seconds)} s`);
        done.push(result);
      }
    }),
  );
  return done;
}

/** The options of a resumable bench (for `parseArgs`); each bench adds its own, e.g. `--seeds`. */
export function benchOptions(defaults: { rows: readonly BenchRow[]; columns: readonly { name: string }[]; out: string }) {
  return {
    rows: { type: 'string', default: defaults.rows.map((r) => r.name).join(',') },
    columns: { type: 'string', default: defaults.columns.map((c) => c.name).join(',') },
    parallel: { type: 'string', default: '2' },
    print: { type: 'boolean', default: false },
    out: { type: 'string', default: defaults.out },
  } as const;
}

/**
 * A bench script's entry point: started by `spawnRun` (`--run <key>`) it trains that one run and
 * prints its result as the last line; otherwise it runs `main`. A failure exits 1.
 */
export function benchEntry<K, R>(runOne: (key: K) => Promise<R>, main: () => Promise<void>): void {
  const at = process.argv.indexOf('--run');
  const work = at >= 0 ? runOne(JSON.parse(process.argv[at + 1]) as K).then((result) => console.log(JSON.stringify(result))) : main();
  work.catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

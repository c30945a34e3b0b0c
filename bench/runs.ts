/**
 * What the resumable benches (bench/learning, bench/algorithms) share: a run is keyed by every
 * setting that changes it plus a digest of the resolved spec it trains, trained in a child
 * process of its own (`--run <key>`), and appended as one JSON line to a committed results file,
 * so a table resumes where it stopped and only missing runs are trained.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { initBackend } from '../src/training/backend';
import type { Metrics } from '../src/training/signals/step-metrics';
import { JobSpec, parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';

/** JSON with sorted keys, so equal settings give equal text. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sort(x)])) : v;
  return JSON.stringify(sort(value));
}

/** A deep copy of `value` without the neutral fields (dotted paths) that hold their neutral value. */
function withoutNeutral(value: Record<string, unknown>, neutral: Readonly<Record<string, unknown>>, prefix = ''): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([field, v]) => !(`${prefix}${field}` in neutral && neutral[`${prefix}${field}`] === v))
      .map(([field, v]) => [field, v && typeof v === 'object' && !Array.isArray(v) ? withoutNeutral(v as Record<string, unknown>, neutral, `${prefix}${field}.`) : v]),
  );
}

/**
 * The identity of a stored result: the key and a digest of the resolved spec the run trains, so a
 * change of any default (a recipe, a preset) makes the old result stale instead of silently
 * reused. `neutral` lists knobs added after results were stored, at the value that leaves a run as
 * it was: they are left out of the digest so that adding a knob does not make every stored run stale.
 */
export function resultId(key: unknown, rawSpec: Record<string, unknown>, neutral: Readonly<Record<string, unknown>> = {}): string {
  const { name: _name, ...resolved } = parseJobSpec(rawSpec);
  const digest = createHash('sha256').update(canonicalJson(withoutNeutral(resolved as unknown as Record<string, unknown>, neutral))).digest('hex').slice(0, 16);
  return `${canonicalJson(key)}#${digest}`;
}

/** Trains one job on the wasm backend (as every stored run did), reporting each step's metrics. */
export async function trainJob(rawSpec: Record<string, unknown>, onStep: (step: number, metrics: Metrics) => void): Promise<{ spec: JobSpec; backend: string; seconds: number }> {
  await initBackend('wasm');
  const spec = parseJobSpec(rawSpec);
  const started = Date.now();
  const trainer = await Trainer.create(spec);
  await trainer.run({ onStep });
  const backend = trainer.backend;
  trainer.dispose();
  return { spec, backend, seconds: (Date.now() - started) / 1000 };
}

/** Runs `script --run <key>` in a child process and parses the last line it prints: the result. */
export function spawnRun<R>(script: string, key: unknown, label: string): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', script, '--run', JSON.stringify(key)], { stdio: ['ignore', 'pipe', 'inherit'] });
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
 * Trains the keys whose id is not yet in `out` (none with `print`), `parallel` child processes at
 * a time, appending each result as it finishes. Returns every result in `out` (the new ones included).
 */
export async function trainMissing<K, R extends { id: string }>(options: {
  keys: readonly K[];
  idOf: (key: K) => string;
  out: string;
  parallel: number;
  print: boolean;
  train: (key: K) => Promise<R>;
  report: (key: K, result: R) => void;
}): Promise<R[]> {
  const { keys, idOf, out, parallel } = options;
  mkdirSync(dirname(out), { recursive: true });
  const done = readResults<R>(out);
  const pending = options.print ? [] : keys.filter((key) => !done.some((d) => d.id === idOf(key)));
  console.log(`${keys.length} runs, ${keys.length - pending.length} already in ${out}; training ${pending.length}, ${parallel} at a time`);
  const queue = [...pending];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let key = queue.shift(); key; key = queue.shift()) {
        const result = await options.train(key);
        appendFileSync(out, `${JSON.stringify(result)}\n`);
        options.report(key, result);
        done.push(result);
      }
    }),
  );
  return done;
}

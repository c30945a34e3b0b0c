/**
 * bench/collapse: do the collapse detectors warn early, and stay quiet on healthy runs?
 *
 * Trains a fixed-seed suite: configurations that tend to collapse (vanilla StarPO without the
 * filter, or any preset, at a high learning rate) and ones that stay healthy (StarPO-S at sane
 * settings). For each run it prints the collapse step (smoothed success below half of its
 * running peak after having risen), the first warning step and the lead time; then the detection
 * rate, median lead time and false alarms, for the runs the default thresholds were calibrated on,
 * for held-out seeds added afterwards, for abrupt breaks at learning rates up to 0.05, and for
 * all. Metrics are cached as JSON lines in --cache, so detectors can be re-tuned by replaying
 * them (`--replay`); bench/collapse.md explains the defaults.
 *
 *   npm run bench:collapse -- [--parallel 2] [--runs bandit-,sokoban-] [--cache bench/results/collapse-v2] [--replay]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '../src/training/backend';
import { CollapseWarning, backtest, collapseStep } from '../src/training/signals/collapse';
import type { Metrics } from '../src/training/signals/step-metrics';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import type { WarmupStore } from '../src/training/warmup-store';
import { learningRunAlarms, printLearningRunAlarms } from './collapse-learning';
import { benchWarmupStore } from './warmup-cache';
import { TYPESCRIPT_LOADER as REGISTER } from '../src/repositories/typescript-child';

export interface SuiteRun {
  name: string;
  expectation: 'collapse' | 'healthy';
  spec: Record<string, unknown>;
  /**
   * Evidence the defaults did not see: round 1 was added after the thresholds of stop 8 were
   * calibrated on the other runs; round 2 after kl_overshoot, the rise rule of the collapse step
   * and reward_std_drop's severity were decided on rounds 0 and 1. `abrupt`: learning rates up to
   * 0.05 with both advantage kinds on every environment, added with kl_spike (breaks within a few
   * steps of the start). `aepo`: the AEPO preset (tree rollouts, its clipping-balanced loss and
   * entropy-aware advantage) on the detectors' defaults, added after every threshold was set.
   */
  heldOut?: 1 | 2 | 'abrupt' | 'aepo';
}

/**
 * FrozenLake runs are the suite's expensive part on a CPU worker, so since the update changed
 * (minibatches of 32, whole-episode history) they train 100 steps and the held-out FrozenLake
 * seeds of rounds 1 and 2 are left out; the Bandit keeps all its rounds.
 *
 * A suite job: the defaults (RAGEN's update and history, the recipe's model) at the run's learning
 * rate, with 8×8 rollouts instead of 8×16 to halve the cost, and no evaluation (collapse is read
 * from the rollouts' success).
 */
const job = (env: string, config: Record<string, unknown>, preset: string, learningRate: number, steps: number, seed: number) => ({
  environment: { id: env, config },
  algorithm: { id: preset },
  rollout: { groups: 8, groupSize: 8 },
  training: { steps, learningRate, seed, evalEvery: 0, evalEpisodes: 32, checkpointEvery: 0 },
});
const frozenLake = (preset: string, learningRate: number, steps: number, seed = 1) => job('frozenlake', { slippery: false }, preset, learningRate, steps, seed);
const slippery = (preset: string, learningRate: number, steps: number, seed = 1) => job('frozenlake', { slippery: true }, preset, learningRate, steps, seed);
const bandit = (preset: string, learningRate: number, steps: number, seed = 1) => job('bandit', {}, preset, learningRate, steps, seed);
/**
 * Sokoban's suite runs keep the recipe they were trained on before grid positions became the
 * default from demonstrations (src/training/spec/recipes.ts): retrained, they match the cache.
 */
const sokoban = (preset: string, learningRate: number, steps: number, seed = 1) => ({ ...job('sokoban', {}, preset, learningRate, steps, seed), model: { config: { gridPositions: false } } });
const lookupQa = (preset: string, learningRate: number, steps: number, seed = 1) => job('lookup-qa', {}, preset, learningRate, steps, seed);

const ABRUPT_RATES = [1e-2, 2e-2, 5e-2];
const ENVIRONMENTS: [string, typeof bandit][] = [['bandit', bandit], ['frozenlake', frozenLake], ['sokoban', sokoban]];
/**
 * AEPO at the default learning rate, 1e-3, and at rates that break it, on the Bandit and on
 * multi-turn FrozenLake, where its trees branch. On the Bandit even 1e-3 is not healthy: like
 * vanilla GRPO there it drifts away from the better arm from step 1 (measured; bench/collapse.md).
 */
const AEPO: SuiteRun[] = [
  { name: 'bandit-aepo', expectation: 'collapse', spec: bandit('aepo', 1e-3, 100), heldOut: 'aepo' },
  ...ABRUPT_RATES.map((lr) => ({ name: `bandit-aepo-lr${lr}`, expectation: 'collapse' as const, spec: bandit('aepo', lr, 25), heldOut: 'aepo' as const })),
  { name: 'frozenlake-aepo', expectation: 'healthy', spec: frozenLake('aepo', 1e-3, 50), heldOut: 'aepo' },
  { name: 'frozenlake-aepo-lr0.02', expectation: 'collapse', spec: frozenLake('aepo', 2e-2, 25), heldOut: 'aepo' },
  { name: 'lookup-qa-aepo', expectation: 'healthy', spec: lookupQa('aepo', 1e-3, 50), heldOut: 'aepo' },
  { name: 'lookup-qa-aepo-lr0.02', expectation: 'collapse', spec: lookupQa('aepo', 2e-2, 25), heldOut: 'aepo' },
];
const ABRUPT: SuiteRun[] = ENVIRONMENTS.flatMap(([env, make]) =>
  ['starpo-ppo', 'starpo-grpo'].flatMap((preset) =>
    ABRUPT_RATES.map((lr) => ({ name: `${env}-${preset.replace('starpo-', '')}-lr${lr}`, expectation: 'collapse' as const, spec: make(preset, lr, 25), heldOut: 'abrupt' as const })),
  ),
);

export const SUITE: SuiteRun[] = [
  { name: 'frozenlake-grpo-lr3e-3', expectation: 'collapse', spec: frozenLake('starpo-grpo', 3e-3, 100) },
  { name: 'frozenlake-ppo-lr3e-3', expectation: 'collapse', spec: frozenLake('starpo-ppo', 3e-3, 100) },
  { name: 'frozenlake-s-lr2e-3', expectation: 'collapse', spec: frozenLake('starpo-s', 2e-3, 100) },
  { name: 'bandit-grpo-lr1e-3', expectation: 'collapse', spec: bandit('starpo-grpo', 1e-3, 150) },
  { name: 'bandit-s-lr5e-3', expectation: 'collapse', spec: bandit('starpo-s', 5e-3, 120) },
  { name: 'frozenlake-grpo-lr3e-3-seed2', expectation: 'collapse', spec: frozenLake('starpo-grpo', 3e-3, 100, 2) },
  { name: 'frozenlake-ppo-lr3e-3-seed2', expectation: 'collapse', spec: frozenLake('starpo-ppo', 3e-3, 100, 2) },
  { name: 'frozenlake-s-lr1e-3', expectation: 'healthy', spec: frozenLake('starpo-s', 1e-3, 100) },
  { name: 'frozenlake-s-lr1e-3-seed2', expectation: 'healthy', spec: frozenLake('starpo-s', 1e-3, 100, 2) },
  { name: 'frozenlake-slippery-s-lr1e-3', expectation: 'healthy', spec: slippery('starpo-s', 1e-3, 100) },
  { name: 'bandit-s-lr1e-3', expectation: 'healthy', spec: bandit('starpo-s', 1e-3, 150) },
  { name: 'bandit-s-grpo-lr1e-3', expectation: 'healthy', spec: bandit('starpo-s-grpo', 1e-3, 150) },
  { name: 'sokoban-s-lr1e-3', expectation: 'healthy', spec: sokoban('starpo-s', 1e-3, 100) },
  // The same settings with seeds the calibration never saw.
  { name: 'bandit-grpo-lr1e-3-seed2', expectation: 'collapse', spec: bandit('starpo-grpo', 1e-3, 150, 2), heldOut: 1 },
  { name: 'bandit-s-lr5e-3-seed2', expectation: 'collapse', spec: bandit('starpo-s', 5e-3, 120, 2), heldOut: 1 },
  { name: 'bandit-s-lr1e-3-seed2', expectation: 'healthy', spec: bandit('starpo-s', 1e-3, 150, 2), heldOut: 1 },
  { name: 'bandit-s-grpo-lr1e-3-seed2', expectation: 'healthy', spec: bandit('starpo-s-grpo', 1e-3, 150, 2), heldOut: 1 },
  // Round 2: seeds no decision has seen.
  { name: 'bandit-s-lr5e-3-seed3', expectation: 'collapse', spec: bandit('starpo-s', 5e-3, 120, 3), heldOut: 2 },
  { name: 'bandit-s-lr1e-3-seed3', expectation: 'healthy', spec: bandit('starpo-s', 1e-3, 150, 3), heldOut: 2 },
  { name: 'bandit-s-grpo-lr1e-3-seed3', expectation: 'healthy', spec: bandit('starpo-s-grpo', 1e-3, 150, 3), heldOut: 2 },
  ...ABRUPT,
  ...AEPO,
];

export type Series = { step: number; metrics: Metrics }[];

/**
 * Trains one suite run (on the backend already initialised) and returns its step metrics. The
 * bench passes the warm-up cache: the suite's runs of one environment differ in preset and
 * learning rate only, so they share their warm-up.
 */
export async function trainSeries(run: SuiteRun, warmupStore?: WarmupStore): Promise<Series> {
  const trainer = await Trainer.create(parseJobSpec(run.spec), { warmupStore });
  const series: Series = [];
  await trainer.run({ onStep: (step, metrics) => void series.push({ step, metrics }) });
  trainer.dispose();
  return series;
}

async function trainOne(run: SuiteRun, path: string): Promise<void> {
  await initBackend('wasm');
  const series = await trainSeries(run, benchWarmupStore());
  // Six significant digits: the cache is committed, and no threshold is that fine.
  const compact = (_key: string, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(6)) : value);
  writeFileSync(path, series.map((row) => JSON.stringify(row, compact)).join('\n') + '\n');
}

function spawnTrain(run: SuiteRun, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, __filename, '--train', run.name, '--out', path], { stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${run.name} exited ${code}`))));
  });
}

export interface RunScore {
  name: string;
  expectation: string;
  collapse: number | null;
  /** Where success fell below half of a peak it never rose to (step 1's): a decline from the start, not a collapse. */
  declined: number | null;
  firstWarning: CollapseWarning | null;
  lead: number | null;
  falseAlarms: { warning: number; critical: number };
  warnings: CollapseWarning[];
}

/** Detection quality of one run: lead time if it collapsed, false alarms if it did not. */
export function score(name: string, expectation: string, series: Series): RunScore {
  const warnings = backtest(series).filter((w) => w.severity !== 'info');
  const collapse = collapseStep(series);
  const fell = collapseStep(series, 10, 0.2, 0);
  const before = collapse === null ? warnings : warnings.filter((w) => w.step <= collapse);
  const firstWarning = before[0] ?? null;
  return {
    name,
    expectation,
    collapse,
    declined: collapse === null ? fell : null,
    firstWarning,
    lead: collapse !== null && firstWarning ? collapse - firstWarning.step : null,
    falseAlarms: collapse === null ? { warning: warnings.filter((w) => w.severity === 'warning').length, critical: warnings.filter((w) => w.severity === 'critical').length } : { warning: 0, critical: 0 },
    warnings,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { parallel: { type: 'string', default: '2' }, cache: { type: 'string', default: 'bench/results/collapse-v2' }, replay: { type: 'boolean' }, runs: { type: 'string' }, train: { type: 'string' }, out: { type: 'string' } } });
  if (values.train) {
    await trainOne(SUITE.find((r) => r.name === values.train)!, values.out!);
    return;
  }
  mkdirSync(values.cache!, { recursive: true });
  const pathOf = (run: SuiteRun) => join(values.cache!, `${run.name}.jsonl`);
  const selected = values.runs ? SUITE.filter((run) => values.runs!.split(',').some((pattern) => run.name.startsWith(pattern))) : SUITE;
  const missing = selected.filter((run) => !existsSync(pathOf(run)));
  if (missing.length > 0 && values.replay) throw new Error(`--replay: no cached metrics for ${missing.map((r) => r.name).join(', ')}`);
  const queue = [...missing];
  await Promise.all(Array.from({ length: Number(values.parallel) }, async () => {
    for (let run = queue.shift(); run; run = queue.shift()) await spawnTrain(run, pathOf(run));
  }));

  const scores = selected.filter((run) => existsSync(pathOf(run))).map((run) => ({ run, score: score(run.name, run.expectation, readFileSync(pathOf(run), 'utf8').trim().split('\n').map((l) => JSON.parse(l))) }));
  console.log('run                                  expected   collapse  first warning (detector)                 lead   warnings (non-info) on a run that did not collapse');
  for (const { run, score: s } of scores) {
    const first = s.firstWarning ? `${s.firstWarning.step} (${s.firstWarning.detector}, ${s.firstWarning.severity})` : '–';
    const alarms = s.collapse === null ? s.warnings.map((w) => `${w.step}:${w.detector}/${w.severity}`).join(' ') || 'none' : '';
    const mark = run.heldOut === 'abrupt' ? ' †' : run.heldOut === 'aepo' ? ' ‡' : run.heldOut ? ' ' + '*'.repeat(run.heldOut) : '';
    console.log(`${(s.name + mark).padEnd(36)} ${s.expectation.padEnd(9)} ${String(s.collapse ?? '–').padStart(8)}  ${first.padEnd(40)} ${String(s.lead ?? '–').padStart(5)}   ${alarms}`);
  }
  console.log('(* held out, round 1: added after the stop-8 thresholds were set; ** round 2: added after kl_overshoot, the rise rule and reward_std_drop as info were decided; † abrupt: learning rates up to 0.05, added with kl_spike)');
  summarize('calibration runs', scores.filter((s) => !s.run.heldOut).map((s) => s.score));
  summarize('held-out runs, round 1', scores.filter((s) => s.run.heldOut === 1).map((s) => s.score));
  summarize('held-out runs, round 2', scores.filter((s) => s.run.heldOut === 2).map((s) => s.score));
  summarize('abrupt breaks (learning rates up to 0.05)', scores.filter((s) => s.run.heldOut === 'abrupt').map((s) => s.score));
  summarize('AEPO (tree rollouts), healthy and abrupt', scores.filter((s) => s.run.heldOut === 'aepo').map((s) => s.score));
  summarize('all runs', scores.map((s) => s.score));
  const breaks = scores.map((s) => s.score).filter((s) => (s.collapse ?? s.declined) !== null && (s.collapse ?? s.declined)! >= 2);
  const warnedBefore = breaks.filter((s) => s.warnings.some((w) => w.step < (s.collapse ?? s.declined)!));
  console.log(`\nevery fall below half of the peak at step 2 or later, warned at least one step before: ${warnedBefore.length} of ${breaks.length}${breaks.length > warnedBefore.length ? ` (not: ${breaks.filter((s) => !warnedBefore.includes(s)).map((s) => s.name).join(', ')})` : ''}`);
  printLearningRunAlarms(learningRunAlarms());
  console.log('targets: every collapse detected, median lead >= 10, every break from step 2 on warned a step before, no warning-level or critical alarm on healthy runs');
}

/**
 * Detection rate and lead times over the runs that collapsed; false alarms over the runs meant to
 * stay healthy that did, and, stricter, over every run that did not collapse (a high-learning-rate
 * run that happened to survive may well deserve its warnings, but they are counted there too).
 */
function summarize(label: string, scores: RunScore[]): void {
  const collapsed = scores.filter((s) => s.collapse !== null);
  const detected = collapsed.filter((s) => s.lead !== null);
  const leads = detected.map((s) => s.lead!).sort((a, b) => a - b);
  const alarms = (runs: RunScore[]) => {
    const critical = runs.reduce((n, s) => n + s.falseAlarms.critical, 0);
    const warning = runs.reduce((n, s) => n + s.falseAlarms.warning, 0);
    return `${critical} critical, ${warning} warning (in ${runs.filter((s) => s.falseAlarms.warning + s.falseAlarms.critical > 0).length} of ${runs.length} runs)`;
  };
  const survived = scores.filter((s) => s.collapse === null);
  const median = (xs: number[]) => (xs.length === 0 ? '–' : xs.length % 2 ? String(xs[(xs.length - 1) / 2]) : String((xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2));
  console.log(`\n${label}: ${collapsed.length} collapsed, ${detected.length} flagged at or before the collapse step; median lead ${median(leads)} steps (all: ${leads.join(', ') || '–'})`);
  const declined = scores.filter((s) => s.declined !== null);
  if (declined.length > 0) {
    // Counted as collapses at the step success fell below half of its step-1 value, for comparison.
    const asCollapses = declined.map((s) => (s.warnings[0] && s.warnings[0].step <= s.declined! ? s.declined! - s.warnings[0].step : null));
    const all = [...leads, ...asCollapses.filter((l): l is number => l !== null)].sort((a, b) => a - b);
    console.log(`  declined from step 1 without rising (not collapses): ${declined.map((s, i) => `${s.name} below half at ${s.declined}, first warning ${s.warnings[0] ? `${s.warnings[0].step} (${s.warnings[0].detector})` : '–'}${asCollapses[i] === null ? ', not before' : ''}`).join('; ')}`);
    console.log(`  counting those as collapses: ${all.length} of ${collapsed.length + declined.length} flagged in time, median lead ${median(all)} (all: ${all.join(', ')})`);
  }
  console.log(`  false alarms on healthy runs: ${alarms(survived.filter((s) => s.expectation === 'healthy'))}; on every run that did not collapse: ${alarms(survived)}`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

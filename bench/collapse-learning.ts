/**
 * The collapse detectors on bench/learning's stored runs: 100-step runs of the default jobs at the
 * default 8 × 16 batch, most of them healthy, several learning slowly from near random level with
 * wide step-to-step swings of success (Sokoban, slippery FrozenLake). Each kept the metrics the
 * monitor reads, so today's detectors are replayed on them (bench/runs.ts, replayWarnings).
 *
 * A run counts as healthy when its evaluation (256 seeds) never fell below half of its value
 * after the warm-up and ended no more than 5 points below it; on a healthy run every warning of
 * severity `warning` or above is a false alarm.
 */
import { taskChangeSteps } from '../src/training/curriculum';
import { ENVIRONMENTS } from '../src/training/envs/registry';
import { parseJobSpec } from '../src/training/spec/validate';
import { type RunKey, specOf } from './learning-table';
import { BenchResult, readResults, replayWarnings } from './runs';

export interface LearningRunAlarms {
  label: string;
  healthy: boolean;
  warnings: NonNullable<BenchResult<RunKey>['warnings']>;
}

export function healthyLearningRun(curve: Record<number, number>): boolean {
  const start = curve[0];
  const steps = Object.keys(curve).map(Number).sort((a, b) => a - b);
  return steps.every((step) => curve[step] >= 0.5 * start) && curve[steps[steps.length - 1]] >= start - 0.05;
}

export function learningRunAlarms(path = 'bench/results/learning.jsonl'): LearningRunAlarms[] {
  return readResults<BenchResult<RunKey>>(path)
    .filter((run) => run.monitor)
    .map((run) => {
      const { env, envConfig, warmup, preset, overrides, seed } = run.key;
      const label = `${env}${envConfig.slippery ? ' (slippery)' : ''} ${warmup}/${preset} ${JSON.stringify(overrides)} seed ${seed}`;
      return { label, healthy: healthyLearningRun(run.curve), warnings: replayWarnings(run, taskChangesOf(run.key)) ?? [] };
    });
}

/** Where a run's RL curriculum ended (a built-in environment's; the served rows train none). */
function taskChangesOf(key: RunKey): number[] {
  if (!(key.env in ENVIRONMENTS)) return [];
  const { training } = parseJobSpec(specOf(key));
  return taskChangeSteps(training, training.steps);
}

/** Prints the false alarms on healthy learning runs and the warnings on the others. */
export function printLearningRunAlarms(runs: readonly LearningRunAlarms[]): void {
  const healthy = runs.filter((r) => r.healthy);
  const alarmed = healthy.filter((r) => r.warnings.length > 0);
  console.log(`\nbench/learning's stored runs (default jobs, 8 × 16, 100 steps; replayed): ${healthy.length} healthy, false alarms (warning or above) on ${alarmed.length}`);
  for (const r of alarmed) console.log(`  false alarm: ${r.label}: ${r.warnings.map((w) => `${w.step}:${w.detector}`).join(' ')}`);
  for (const r of runs.filter((x) => !x.healthy)) console.log(`  not healthy (evaluation fell below half of its start, or ended lower): ${r.label}: ${r.warnings.map((w) => `${w.step}:${w.detector}`).join(' ') || 'no warning'}`);
}

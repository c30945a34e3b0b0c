import { mean } from '../../src/training/algorithms/stats';
import { baselines } from '../../src/training/experiment/baselines';
import { METRIC, evalSuccessOf } from '../../src/training/signals/step-metrics';
import { JobSpec, parseJobSpec } from '../../src/training/spec/validate';
import { Trainer } from '../../src/training/trainer';

/**
 * Trains a job to the end, or stopped after RL step `stopAfter` (the first steps of a longer job,
 * under its own learning-rate schedule); returns its evaluation success by step (step 0 = after
 * the warm-up) and, per RL step, the value of each metric in `track`.
 */
export async function trainTracking(spec: JobSpec, track: readonly string[] = [], stopAfter = spec.training.steps): Promise<{ evals: Map<number, number>; series: Record<string, number[]> }> {
  const trainer = await Trainer.create(spec);
  const evals = new Map<number, number>();
  const series: Record<string, number[]> = Object.fromEntries(track.map((name) => [name, []]));
  let last = 0;
  await trainer.run({
    onStep: (step, metrics) => {
      last = step;
      const evalSuccess = evalSuccessOf(metrics);
      if (evalSuccess !== undefined) evals.set(step, evalSuccess);
      if (step > 0) for (const name of track) series[name].push(metrics[name]);
    },
    shouldStop: () => last >= stopAfter,
  });
  trainer.dispose();
  return { evals, series };
}

/** Trains a job spec to the end and returns its evaluation success by step (step 0 = after the warm-up). */
export async function evalSuccessCurve(rawSpec: unknown, label: string): Promise<Map<number, number>> {
  const { evals } = await trainTracking(parseJobSpec(rawSpec));
  console.log(`${label} eval success by step: ${[...evals].map(([step, value]) => `${step}:${value.toFixed(3)}`).join('  ')}`);
  return evals;
}

/** What a job from the format warm-up learned in its first RL steps, beside the random agent on the same evaluation seeds. */
export interface FormatJobStart {
  random: number;
  afterWarmup: number;
  final: number;
  /** The rollouts' success, mean over the first and over the last ten RL steps. */
  firstRollouts: number;
  lastRollouts: number;
  /** Episodes in the self-imitation buffer after the last step. */
  buffer: number;
}

/** The default job from the format warm-up on `environment`, seed 1, evaluated after the warm-up and after its first `steps` RL steps. */
export function formatJob(environment: { id: string; config?: Record<string, unknown> }, steps: number): JobSpec {
  return parseJobSpec({ environment, algorithm: { id: 'starpo-s' }, training: { evalEvery: steps, seed: 1, checkpointEvery: 0, warmup: { kind: 'format' } } });
}

/**
 * What the first steps of a job from the format warm-up must show: the warm-up policy at the
 * random agent's level (it knows the format, not the task), a replay that holds successes, and
 * evaluation `evalGain` and the rollouts' success `rolloutGain` above where they started.
 */
export function expectLearnedFromFormat(start: FormatJobStart, evalGain: number, rolloutGain: number): void {
  expect(Math.abs(start.afterWarmup - start.random)).toBeLessThan(0.05);
  expect(start.buffer).toBeGreaterThan(0);
  expect(start.final).toBeGreaterThanOrEqual(start.random + evalGain);
  expect(start.lastRollouts - start.firstRollouts).toBeGreaterThanOrEqual(rolloutGain);
}

/**
 * Trains a job from the format warm-up up to its first evaluation after the warm-up
 * (`spec.training.evalEvery` RL steps, under the job's own schedule; see formatJob) and logs what
 * it learned under `label`.
 */
export async function formatJobStart(spec: JobSpec, label: string): Promise<FormatJobStart> {
  const steps = spec.training.evalEvery;
  const { random } = await baselines(spec);
  const { evals, series } = await trainTracking(spec, [METRIC.successRate, METRIC.selfImitationBuffer], steps);
  const rollouts = series[METRIC.successRate];
  const buffer = series[METRIC.selfImitationBuffer];
  const start: FormatJobStart = {
    random,
    afterWarmup: evals.get(0)!,
    final: evals.get(steps)!,
    firstRollouts: mean(rollouts.slice(0, 10)),
    lastRollouts: mean(rollouts.slice(-10)),
    buffer: buffer[buffer.length - 1],
  };
  const f = (x: number) => x.toFixed(3);
  console.log(`${label}: random ${f(random)}, eval ${f(start.afterWarmup)} -> ${f(start.final)} after ${steps} steps, rollout success ${f(start.firstRollouts)} -> ${f(start.lastRollouts)}, buffer ${start.buffer}`);
  return start;
}

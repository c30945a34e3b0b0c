import { evalSuccessOf } from '../../src/training/signals/step-metrics';
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

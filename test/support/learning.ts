import { evalSuccessOf } from '../../src/training/signals/step-metrics';
import { parseJobSpec } from '../../src/training/spec/validate';
import { Trainer } from '../../src/training/trainer';

/** Trains a job spec to the end and returns its evaluation success by step (step 0 = after the warm-up). */
export async function evalSuccessCurve(rawSpec: unknown, label: string): Promise<Map<number, number>> {
  const trainer = await Trainer.create(parseJobSpec(rawSpec));
  const evals = new Map<number, number>();
  await trainer.run({
    onStep: (step, metrics) => {
      const evalSuccess = evalSuccessOf(metrics);
      if (evalSuccess !== undefined) evals.set(step, evalSuccess);
    },
  });
  trainer.dispose();
  console.log(`${label} eval success by step: ${[...evals].map(([step, value]) => `${step}:${value.toFixed(3)}`).join('  ')}`);
  return evals;
}

/**
 * One cell of a results table: the same job over several seeds, reported as RAGEN-style learning
 * figures are (docs/results.md): evaluation success after the warm-up and after RL, each as the
 * mean and the min–max over the seeds. The benches (bench/learning, bench/algorithms) and an
 * experiment's table (GET /v1/experiments/{id}) both compute their cells here, so a stored run and
 * an experiment's job give the same cell.
 */

/** Mean and range over seeds. */
export interface Spread {
  mean: number;
  min: number;
  max: number;
}

/** What a cell reads of one seed's run: eval success (0–1) at step 0 and at its last step; null until it is known. */
export interface SeedOutcome {
  seed: number;
  afterWarmup: number | null;
  afterRl: number | null;
}

export interface CellSummary {
  /** Seeds whose run is counted in `afterRl` (it reached its last step). */
  seeds: number;
  afterWarmup: Spread | null;
  afterRl: Spread | null;
}

/** Mean, min and max of `values`; null for none. */
export function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return { mean: sum / values.length, min: Math.min(...values), max: Math.max(...values) };
}

/**
 * The cell of these seeds' outcomes. After RL counts only finished runs; after the warm-up counts
 * every run that has reached step 0, so a running cell already shows where its seeds start.
 */
export function summariseCell(outcomes: readonly SeedOutcome[]): CellSummary {
  const finished = outcomes.filter((o) => o.afterRl !== null);
  return {
    seeds: finished.length,
    afterWarmup: spread(outcomes.flatMap((o) => (o.afterWarmup === null ? [] : [o.afterWarmup]))),
    afterRl: spread(finished.map((o) => o.afterRl!)),
  };
}

/** A share as a percentage with one decimal. */
export const percent = (x: number) => (100 * x).toFixed(1);

/**
 * The cell as the results tables print it: "a → b" for one seed, "a → b (min–max, n seeds)" for
 * several (percent, after the warm-up → after RL); "…" while no seed has finished.
 */
export function formatCell(cell: CellSummary): string {
  if (cell.afterRl === null || cell.afterWarmup === null) return '…';
  const head = `${percent(cell.afterWarmup.mean)} → ${percent(cell.afterRl.mean)}`;
  return cell.seeds === 1 ? head : `${head} (${percent(cell.afterRl.min)}–${percent(cell.afterRl.max)}, ${cell.seeds} seeds)`;
}

/** One step of a cell's curve over its seeds. */
export interface BandPoint {
  step: number;
  mean: number;
  min: number;
  max: number;
  /** Seeds that have a value at this step. */
  n: number;
}

/**
 * A cell's curve with the seeds' spread: at every step where any seed has a value, the mean, min
 * and max over the seeds that have one (a mean line and a min–max band).
 */
export function band(curves: readonly Readonly<Record<number, number>>[]): BandPoint[] {
  const steps = [...new Set(curves.flatMap((curve) => Object.keys(curve).map(Number)))].sort((a, b) => a - b);
  return steps.map((step) => {
    const values = curves.flatMap((curve) => (Number.isFinite(curve[step]) ? [curve[step]] : []));
    return { step, ...spread(values)!, n: values.length };
  });
}

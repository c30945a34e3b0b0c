import type { AlgorithmResult, SeriesName } from './algorithms';
import { Spread, percent, summariseCell } from '../src/training/experiment/cells';
import { outcomeOf, replayWarnings } from './runs';

/** One cell of the algorithms table: a preset on an environment, over the seeds it has. */
export interface CellSummary {
  seeds: number;
  /** Eval success after RL (RAGEN's protocol): mean and range over seeds. */
  success: Spread;
  afterWarmup: number;
  /** `success/pass_at_k` (k = group size) over the last tenth of the steps. */
  passAtK?: number;
  /** Distinct action sequences per prompt, mean over the steps. */
  distinct?: number;
  /** `entropy/mean` over the first, middle and last tenth of the steps; `lateStd` its std over the second half. */
  entropy?: { start: number; mid: number; end: number; lateStd: number };
  branches?: number;
  toolCalls?: number;
  toolSuccess?: number;
  minutes: number;
  /**
   * Per seed, the first collapse warning (severity ≥ warning) as "step N detector", "none", or "–"
   * for a run stored before warnings were kept: today's detectors replayed where the run kept its
   * monitor inputs, else what its monitor raised when it trained.
   */
  firstWarnings: string[];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const std = (xs: readonly number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

/** The mean of a tenth of the series (at least one step) at its start, middle or end. */
export function windowMean(xs: readonly number[], at: 'start' | 'mid' | 'end'): number {
  const width = Math.max(1, Math.round(xs.length / 10));
  const from = at === 'start' ? 0 : at === 'end' ? xs.length - width : Math.max(0, Math.floor(xs.length / 2) - Math.floor(width / 2));
  return mean(xs.slice(from, from + width));
}

/** Mean over seeds of a per-seed statistic of a series; undefined unless every seed reported it. */
function perSeed(results: readonly AlgorithmResult[], name: SeriesName, stat: (xs: readonly number[]) => number): number | undefined {
  const series = results.map((r) => r.series[name]);
  return series.every((xs) => xs !== undefined && xs.length > 0) ? mean(series.map((xs) => stat(xs!))) : undefined;
}

export function summarise(results: readonly AlgorithmResult[]): CellSummary | undefined {
  if (results.length === 0) return undefined;
  const cell = summariseCell(results.map(outcomeOf));
  const entropy = (at: 'start' | 'mid' | 'end') => perSeed(results, 'entropy', (xs) => windowMean(xs, at));
  const start = entropy('start');
  return {
    seeds: results.length,
    success: cell.afterRl!,
    afterWarmup: cell.afterWarmup!.mean,
    passAtK: perSeed(results, 'passAtK', (xs) => windowMean(xs, 'end')),
    distinct: perSeed(results, 'distinctActionSequences', mean),
    entropy: start === undefined ? undefined : { start, mid: entropy('mid')!, end: entropy('end')!, lateStd: perSeed(results, 'entropy', (xs) => std(xs.slice(Math.floor(xs.length / 2))))! },
    branches: perSeed(results, 'branchesPerPrompt', mean),
    toolCalls: perSeed(results, 'toolCalls', mean),
    toolSuccess: perSeed(results, 'toolSuccess', mean),
    minutes: mean(results.map((r) => r.seconds)) / 60,
    firstWarnings: results.map((r) => replayWarnings(r)).map((w) => (w === undefined ? '–' : w.length === 0 ? 'none' : `step ${w[0].step} ${w[0].detector}`)),
  };
}

/** A share as a percentage with one decimal. */
export const pct = percent;
/** A number with `digits` decimals, "–" when not reported. */
export const num = (x: number | undefined, digits = 2) => (x === undefined ? '–' : x.toFixed(digits));

import type { EnvDefinition } from '../training/envs/types';
import type { ExperimentCellView, ExperimentSummaryView } from '../contracts/experiments.dto';
import type { EvalReading, ExperimentJobRow } from '../repositories/experiment.repository';
import type { References } from '../training/experiment/baselines';
import { formatCell, summariseCell } from '../training/experiment/cells';
import { specDigest } from '../training/experiment/digest';
import { SpecValidationError } from '../training/spec/errors';
import { createHash } from 'node:crypto';
import type { ExperimentCell } from '../training/experiment/grid';
import { EVAL_METRICS } from '../training/signals/step-metrics';

/** The evaluation series a table reads, the first a step has: RAGEN's sampled protocol, else greedy, else a version-1 job's. */
export const EVAL_SERIES = [EVAL_METRICS.sampled.success, EVAL_METRICS.greedy.success, EVAL_METRICS.legacy.success] as const;

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/** Digests kept at most (each a few dozen bytes), oldest out first. */
const KEPT_DIGESTS = 10_000;

/**
 * Spec digests by the spec's text: resolving a spec to digest it costs about half a millisecond,
 * which a 64-job experiment's GET would otherwise spend on every read. A job's spec changes only
 * through a rollback or fork, and then its text does too.
 */
export class SpecDigests {
  private readonly byText = new Map<string, string>();

  /** `served`: the registered environment the spec names (its manifest digest keys the cache too). */
  of(spec: unknown, served?: EnvDefinition): string {
    const text = `${served?.served?.digest ?? ''}${JSON.stringify(spec)}`;
    let digest = this.byText.get(text);
    if (digest === undefined) {
      digest = digestOf(spec, served);
      this.byText.set(text, digest);
      if (this.byText.size > KEPT_DIGESTS) this.byText.delete(this.byText.keys().next().value as string);
    }
    return digest;
  }
}

/**
 * The run's digest; for a job whose environment is no longer registered (its spec cannot be
 * resolved any more), the digest of its stored spec, so the experiment's table still reads.
 */
function digestOf(spec: unknown, served?: EnvDefinition): string {
  try {
    return specDigest(spec, served);
  } catch (error) {
    if (!(error instanceof SpecValidationError)) throw error;
    return createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16);
  }
}

/**
 * An experiment's status from its jobs': running while any runs, else queued while any waits,
 * else paused while any is paused; once all have ended, succeeded if all did, failed if any
 * failed, else cancelled.
 */
export function experimentStatus(jobs: readonly Pick<ExperimentJobRow, 'status'>[]): ExperimentSummaryView['status'] {
  const has = (status: string) => jobs.some((job) => job.status === status);
  if (has('running')) return 'running';
  if (has('queued')) return 'queued';
  if (has('paused')) return 'paused';
  if (jobs.every((job) => job.status === 'succeeded')) return 'succeeded';
  return has('failed') ? 'failed' : 'cancelled';
}

export function progressOf(jobs: readonly Pick<ExperimentJobRow, 'status' | 'currentStep' | 'totalSteps'>[]): ExperimentSummaryView['progress'] {
  const byStatus: Record<string, number> = {};
  for (const job of jobs) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
  // An ended job counts as done whatever step it stopped at: nothing more of it will run.
  const stepsDone = jobs.reduce((n, job) => n + (ENDED.has(job.status) ? job.totalSteps : job.currentStep), 0);
  const stepsTotal = jobs.reduce((n, job) => n + job.totalSteps, 0);
  return { jobs: jobs.length, byStatus, stepsDone, stepsTotal, fraction: stepsTotal === 0 ? 0 : stepsDone / stepsTotal };
}

/**
 * The experiment's table: per cell, each seed's evaluation at step 0 and at its last step (null
 * until reached), summarised as the benches summarise theirs, with the cell's references.
 */
export function cellsOf(
  cells: readonly ExperimentCell[],
  jobs: readonly ExperimentJobRow[],
  readings: readonly EvalReading[],
  referencesOf: (cell: ExperimentCell) => References | null,
  digests: SpecDigests = new SpecDigests(),
  served?: EnvDefinition,
): ExperimentCellView[] {
  return cells.map((cell) => {
    const runs = jobs
      .filter((job) => job.experimentCell === cell.index)
      .map((job) => {
        const at = (step: number) => readings.find((r) => r.jobId === job.id && r.step === step)?.value ?? null;
        const seed = (job.spec as { training?: { seed?: number } }).training?.seed ?? 1;
        return {
          jobId: job.id,
          name: job.name,
          cell: cell.index,
          seed,
          status: job.status,
          currentStep: job.currentStep,
          totalSteps: job.totalSteps,
          digest: digests.of(job.spec, served),
          afterWarmup: at(0),
          // A run counts once it reached its last step, not a step it stopped at early.
          afterRl: at(job.totalSteps),
          archived: job.archivedAt !== null,
        };
      })
      .sort((a, b) => a.seed - b.seed);
    const summary = summariseCell(runs);
    const references = referencesOf(cell);
    return {
      index: cell.index,
      label: cell.label,
      point: cell.point,
      seeds: cell.seeds,
      finished: summary.seeds,
      afterWarmup: summary.afterWarmup,
      afterRl: summary.afterRl,
      table: formatCell(summary),
      random: references?.random ?? null,
      optimal: references?.optimal ?? null,
      expert: references?.expert ?? null,
      runs,
    };
  });
}

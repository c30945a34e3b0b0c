import { api } from '../api.js';

/** Evaluation success series, whatever the evaluation protocol names them (eval/sampled/success, eval/greedy/success, eval/success …). */
export const EVAL_SUCCESS = /^eval\/.*success/;
/** A run's last evaluation is "far below its best" when it lost at least this much (absolute) … */
const DROP_POINTS = 0.1;
/** … and kept at most this share of the best. */
const DROP_SHARE = 0.8;

/**
 * The evaluation a finished run ended with against its best: `{ metric, last, best, bestStep }`
 * of its first evaluation series, and `fell` when the last is far below the best (at least
 * DROP_POINTS lower and at most DROP_SHARE of it): a "succeeded" run whose policy broke on the way.
 */
export function evaluationDrop(rows) {
  const metric = [...new Set(rows.flatMap((r) => Object.keys(r.metrics)))].filter((n) => EVAL_SUCCESS.test(n)).sort()[0];
  const points = metric ? rows.filter((r) => Number.isFinite(r.metrics[metric])) : [];
  if (points.length === 0) return null;
  const last = points[points.length - 1];
  const best = points.reduce((b, r) => (r.metrics[metric] > b.metrics[metric] ? r : b), points[0]);
  const [lastValue, bestValue] = [last.metrics[metric], best.metrics[metric]];
  return { metric, last: lastValue, lastStep: last.step, best: bestValue, bestStep: best.step, fell: bestValue - lastValue >= DROP_POINTS && lastValue <= DROP_SHARE * bestValue };
}

/** Evaluation drops of succeeded jobs, read once per job (an ended job's series no longer changes). */
export class EvaluationDropCache {
  constructor() {
    /** @type {Map<string, ReturnType<typeof evaluationDrop>>} */
    this.byJob = new Map();
  }

  async load(jobs) {
    await Promise.all(
      jobs
        .filter((job) => job.status === 'succeeded' && !this.byJob.has(job.id))
        .map(async (job) => {
          try {
            const { data } = await api(`/v1/jobs/${job.id}/metrics?names=eval/sampled/success,eval/greedy/success,eval/success`);
            this.byJob.set(job.id, evaluationDrop(data));
          } catch {
            /* no badge; the next refresh tries again */
          }
        }),
    );
  }

  get(jobId) {
    return this.byJob.get(jobId) ?? null;
  }
}

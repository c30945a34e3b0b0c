import type { JobRepository, JobRow } from '../repositories/job.repository';
import type { ResultsRepository } from '../repositories/results.repository';
import type { WebhookRepository } from '../repositories/webhook.repository';
import type { CollapseWarning } from '../training/signals/collapse';
import type { TrainingSink } from './training-runner';

/** A write retried within the write deadline (JobRunnerService); it rejects when it gives up. */
export type RetriedWrite = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

/**
 * Where a running job's reports go: each is stored (retried) before the child gets its ack;
 * a new warning also queues the owner's webhooks, then goes to `onWarnings` (the collapse rule).
 */
export function jobSink(
  repositories: { jobs: JobRepository; results: ResultsRepository; webhooks: WebhookRepository },
  job: JobRow,
  totalSteps: number,
  checkpointsKept: number,
  retry: RetriedWrite,
  onWarnings: (warnings: CollapseWarning[]) => void,
): TrainingSink {
  const { jobs, results, webhooks } = repositories;
  const jobId = job.id;
  return {
    started: (info) =>
      retry('the start', () =>
        Promise.all([
          jobs.update(jobId, { backend: info.backend }),
          jobs.addEvent(jobId, 'log', `training process started on ${info.backend} (${info.parameters} parameters) from step ${info.fromStep}`, info),
        ]),
      ).then(() => undefined),
    step: (step, metrics, trajectories) => retry(`step ${step}`, () => results.saveStep(jobId, step, totalSteps, metrics, trajectories)).then(() => undefined),
    warnings: async (step, warnings) => {
      const added = await retry(`the warnings of step ${step}`, () => results.saveWarnings(jobId, warnings));
      if (added > 0) {
        for (const warning of warnings.filter((w) => w.severity !== 'info')) {
          await retry('a warning webhook', () => webhooks.enqueue(job.ownerId, 'collapse.warning', { type: 'collapse.warning', timestamp: new Date().toISOString(), data: { jobId, jobName: job.name, ...warning } }));
        }
      }
      onWarnings(warnings);
    },
    checkpoint: (step, bytes, health) => retry(`the checkpoint of step ${step}`, () => results.saveCheckpoint(jobId, step, bytes, checkpointsKept, health)).then(() => undefined),
    log: (message) => retry('a log line', () => jobs.addEvent(jobId, 'log', message)).then(() => undefined),
  };
}

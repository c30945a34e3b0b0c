import type { AttemptToken, JobLifecycleRepository } from '../repositories/job-lifecycle.repository';
import type { JobRow } from '../repositories/job.repository';
import type { WebhookRepository } from '../repositories/webhook.repository';
import type { CollapseWarning } from '../training/signals/collapse';
import type { TrainingSink } from './training-runner';
import { WarmupReport, parseWarmupReport } from '../training/warmup-report';

/** A write retried within the write deadline (JobRunnerService); it rejects when it gives up. */
export type RetriedWrite = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

/**
 * Where a running attempt's reports go: each is stored (retried, and fenced by the attempt's
 * token: JobLifecycleRepository) before the child gets its ack; a new warning also queues the
 * owner's webhooks, then goes to `onWarnings` (the collapse rule).
 */
export function jobSink(
  repositories: { lifecycle: JobLifecycleRepository; webhooks: WebhookRepository },
  job: JobRow,
  token: AttemptToken,
  settings: { totalSteps: number; checkpointsKept: number },
  retry: RetriedWrite,
  onWarnings: (warnings: CollapseWarning[]) => void,
): TrainingSink {
  const { lifecycle, webhooks } = repositories;
  const jobId = job.id;
  return {
    started: (info) => retry('the start', () => lifecycle.log(token, `training process started on ${info.backend} (${info.parameters} parameters) from step ${info.fromStep}`, info, info.backend)),
    step: (step, metrics, trajectories) => retry(`step ${step}`, () => lifecycle.saveStep(token, step, settings.totalSteps, metrics, trajectories)),
    warnings: async (step, warnings) => {
      const added = await retry(`the warnings of step ${step}`, () => lifecycle.saveWarnings(token, warnings));
      if (added > 0) {
        for (const warning of warnings.filter((w) => w.severity !== 'info')) {
          await retry('a warning webhook', () => webhooks.enqueue(job.ownerId, 'collapse.warning', { type: 'collapse.warning', timestamp: new Date().toISOString(), data: { jobId, jobName: job.name, ...warning } }));
        }
      }
      onWarnings(warnings);
    },
    checkpoint: (step, bytes, health) => retry(`the checkpoint of step ${step}`, () => lifecycle.saveCheckpoint(token, step, bytes, settings.checkpointsKept, health)).then(() => undefined),
    // A warm-up progress line also carries its numbers, for live views (the dashboard's warm-up curve).
    log: (message) => retry('a log line', () => lifecycle.log(token, message, warmupData(message))),
  };
}

function warmupData(message: string): { warmup: WarmupReport & Record<string, string | number> } | undefined {
  const report = parseWarmupReport(message);
  return report ? { warmup: { ...report } } : undefined;
}

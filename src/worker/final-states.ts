import type { Logger } from '@nestjs/common';
import type { ControlRequest } from '../contracts/jobs.dto';
import { AttemptLost, AttemptToken, JobLifecycleRepository } from '../repositories/job-lifecycle.repository';
import type { JobRow } from '../repositories/job.repository';
import type { WebhookRepository } from '../repositories/webhook.repository';
import type { RetriedWrite } from './job-sink';
import type { Notification, Settlement } from './settlement';

/** Longest pause between background tries to store a final state the database would not take. */
const RETRY_MAX_MS = 30_000;

interface Write {
  what: string;
  write: () => Promise<unknown>;
}

/**
 * Stores how attempts ended: the job's state with the attempt's usage record closed (one
 * transaction, JobLifecycleRepository.settle), then the webhook. What the database will not take
 * within the write deadline is stored in the background, up to every 30 s until it is, so the
 * runner returns and frees the slot at once (the job shows `running` meanwhile: nothing else can
 * be written). An attempt that has lost its job stores nothing: the job is another attempt's.
 */
export class FinalStates {
  /** Final states still being stored in the background, by job. */
  private readonly unsettled = new Map<string, Promise<void>>();
  private closing = false;

  constructor(
    private readonly repositories: { lifecycle: JobLifecycleRepository; webhooks: WebhookRepository },
    private readonly retried: RetriedWrite,
    private readonly logger: Logger,
  ) {}

  get pending(): number {
    return this.unsettled.size;
  }

  /**
   * Shutdown: background tries stop. Such a job stays `running` on this worker, which the
   * scheduler requeues once the worker has stopped heart-beating (docs/scheduling.md).
   */
  close(): void {
    this.closing = true;
    for (const jobId of this.unsettled.keys()) this.logger.warn(`job ${jobId}: final state not stored before shutdown; it is requeued once this worker is gone`);
  }

  /** `plan` decides the end from the request pending when it is stored; the attempt's slot was freed at `endedAt`. */
  async store(job: JobRow, token: AttemptToken, endedAt: Date, plan: (pending: ControlRequest | null) => Settlement): Promise<void> {
    let chosen: Settlement | null = null;
    const pending: Write[] = [
      {
        what: 'the final state',
        write: () =>
          this.repositories.lifecycle.settle(token, endedAt, (request) => {
            chosen = plan(request);
            return chosen.end;
          }),
      },
      { what: 'the webhook', write: () => (chosen?.notify ? this.notify(job, chosen.notify) : Promise.resolve()) },
    ];
    try {
      while (pending.length > 0) {
        await this.retried(`store ${pending[0].what}`, pending[0].write);
        pending.shift();
      }
      this.logStored(job.id, chosen);
    } catch (error) {
      if (error instanceof AttemptLost) return this.lost(token);
      this.logger.error(`job ${job.id}: could not store ${pending[0].what} (${(error as Error).message}); retrying in the background`);
      this.later(job.id, token, pending, () => chosen);
    }
  }

  private later(jobId: string, token: AttemptToken, pending: Write[], chosen: () => Settlement | null): void {
    const store = async () => {
      for (let attempt = 1; !this.closing; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** (attempt - 1), RETRY_MAX_MS)).unref());
        try {
          while (pending.length > 0) {
            await pending[0].write();
            pending.shift();
          }
          this.logger.log(`job ${jobId}: final state stored after ${attempt} background attempt(s)`);
          this.logStored(jobId, chosen());
          return;
        } catch (error) {
          if (error instanceof AttemptLost) return this.lost(token);
          if (attempt % 10 === 0) this.logger.warn(`job ${jobId}: still cannot store ${pending[0].what}: ${(error as Error).message}`);
        }
      }
    };
    this.unsettled.set(jobId, store().finally(() => this.unsettled.delete(jobId)));
  }

  private logStored(jobId: string, settlement: Settlement | null): void {
    if (settlement?.end.rollbackToStep !== undefined) this.logger.warn(`job ${jobId}: ${settlement.end.record.message}`);
  }

  private lost(token: AttemptToken): void {
    this.logger.warn(`job ${token.jobId}: final state of attempt ${token.attempt} not stored: the attempt no longer holds the job (another attempt took it, or an earlier try stored it)`);
  }

  private notify(job: JobRow, notification: Notification): Promise<number> {
    return this.repositories.webhooks.enqueue(job.ownerId, notification.event, { type: notification.event, timestamp: new Date().toISOString(), data: { jobId: job.id, jobName: job.name, ...notification.detail } as object });
  }
}

import type { Logger } from '@nestjs/common';
import type { JobRepository, JobRow } from '../repositories/job.repository';
import type { ResultsRepository } from '../repositories/results.repository';
import type { UsageRepository } from '../repositories/usage.repository';
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
 * Stores how attempts ended: the job's state, the closed usage record, the webhook, in that
 * order. What the database will not take within the write deadline is stored in the
 * background, up to every 30 s until it is, so the runner returns and frees the slot at once
 * (the job shows `running` meanwhile: nothing else can be written).
 */
export class FinalStates {
  /** Final states still being stored in the background, by job. */
  private readonly unsettled = new Map<string, Promise<void>>();
  private closing = false;

  constructor(
    private readonly repositories: { jobs: JobRepository; results: ResultsRepository; usage: UsageRepository; webhooks: WebhookRepository },
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

  async store(job: JobRow, settlement: Settlement): Promise<void> {
    const pending: Write[] = [
      { what: settlement.kind === 'rollback' ? 'the rollback' : `the final state (${settlement.data.status})`, write: () => this.apply(job.id, settlement) },
      { what: 'the usage record', write: () => this.repositories.usage.close(job.id) },
    ];
    const notification = settlement.kind === 'transition' ? settlement.notify : undefined;
    if (notification) pending.push({ what: 'the webhook', write: () => this.notify(job, notification) });
    try {
      while (pending.length > 0) {
        await this.retried(`store ${pending[0].what}`, pending[0].write);
        pending.shift();
      }
    } catch (error) {
      this.logger.error(`job ${job.id}: could not store ${pending[0].what} (${(error as Error).message}); retrying in the background`);
      this.later(job.id, pending);
    }
  }

  private later(jobId: string, pending: Write[]): void {
    const store = async () => {
      for (let attempt = 1; !this.closing; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** (attempt - 1), RETRY_MAX_MS)).unref());
        try {
          while (pending.length > 0) {
            await pending[0].write();
            pending.shift();
          }
          this.logger.log(`job ${jobId}: final state stored after ${attempt} background attempt(s)`);
          return;
        } catch (error) {
          if (attempt % 10 === 0) this.logger.warn(`job ${jobId}: still cannot store ${pending[0].what}: ${(error as Error).message}`);
        }
      }
    };
    this.unsettled.set(jobId, store().finally(() => this.unsettled.delete(jobId)));
  }

  /** Writes a settlement; a job that has meanwhile left the states it assumes is reported, not overwritten. */
  private async apply(jobId: string, settlement: Settlement): Promise<void> {
    const data = { status: settlement.data.status ?? 'running', ...settlement.extra } as object;
    const applied =
      settlement.kind === 'rollback'
        ? await this.repositories.results.rollBackTo(jobId, settlement.toStep, settlement.data, { message: settlement.message, data: { ...settlement.extra } as object })
        : await this.repositories.jobs.transition(jobId, settlement.from, settlement.data, { message: settlement.message, data });
    if (!applied) {
      const expected = settlement.kind === 'rollback' ? 'running' : settlement.from.join(' or ');
      this.logger.warn(`job ${jobId}: not ${settlement.kind === 'rollback' ? 'rolled back' : `marked ${settlement.data.status}`}: it is no longer ${expected} (or an earlier try stored it)`);
    } else if (settlement.kind === 'rollback') {
      this.logger.warn(`job ${jobId}: ${settlement.message}`);
    }
  }

  private notify(job: JobRow, notification: Notification): Promise<number> {
    return this.repositories.webhooks.enqueue(job.ownerId, notification.event, { type: notification.event, timestamp: new Date().toISOString(), data: { jobId: job.id, jobName: job.name, ...notification.detail } as object });
  }
}

import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobRepository } from '../repositories/job.repository';
import { QueueRepository } from '../repositories/queue.repository';

const BATCH = 50;
/** A dispatched queued job older than this is checked for a lost carrier (Redis restarted). */
const RECONCILE_AFTER_MS = 10_000;

/**
 * Moves stored jobs to the queue (an outbox: Postgres is the record, Redis only carries work).
 * A submission is stored first and dispatched by this loop, so a Redis outage delays jobs but
 * never loses or half-accepts them; after Redis comes back empty, queued jobs whose carrier is
 * gone are sent again.
 */
@Injectable()
export class DispatchService implements OnModuleDestroy {
  private readonly logger = new Logger(DispatchService.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly jobs: JobRepository,
    private readonly queue: QueueRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.kick(), this.config.dispatchIntervalMs);
    this.kick();
  }

  /** Runs a dispatch pass now (coalesced with one in flight). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((error: Error) => this.logger.warn(`dispatch failed: ${error.message}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves when no pass is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async pass(): Promise<void> {
    let sent: number;
    do {
      sent = await this.jobs.dispatchPending(BATCH, (id) => this.queue.enqueueTraining(id));
      if (sent > 0) this.logger.debug(`dispatched ${sent} job(s)`);
    } while (sent === BATCH);
    await this.reconcile();
  }

  private async reconcile(): Promise<void> {
    const suspects = await this.jobs.dispatchedQueued(new Date(Date.now() - RECONCILE_AFTER_MS), BATCH);
    const lost: string[] = [];
    for (const { id } of suspects) {
      if (!(await this.queue.hasTrainingJob(id))) lost.push(id);
    }
    if (lost.length > 0) {
      this.logger.warn(`re-dispatching ${lost.length} queued job(s) whose queue entry is gone`);
      await this.jobs.markUndispatched(lost);
      this.again = true;
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
  }
}

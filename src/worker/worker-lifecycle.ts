import { Inject, Injectable, Logger } from '@nestjs/common';
import { hostname } from 'node:os';
import { APP_CONFIG, AppConfig, ConfigError } from '../config/config';
import { QueueRepository, TrainingConsumer } from '../repositories/queue.repository';
import { WorkerRepository } from '../repositories/worker.repository';
import { EvaluationRunnerService } from './evaluation-runner.service';
import { JobRunnerService } from './job-runner.service';
import { BackendName, initBackend, shareCoresAmong } from '../training/backend';

/**
 * Starts consuming only after the backend has been resolved and what an earlier process of the
 * same name left behind was given back; announces the worker (heartbeats) only while its queue
 * consumer runs. On shutdown, checkpoints and requeues running jobs before the queue connection
 * closes. A consumer that stops on its own is fatal (`fatal` resolves): the process exits and its
 * supervisor starts it again, rather than heart-beating while taking nothing.
 */
@Injectable()
export class WorkerLifecycle {
  private readonly logger = new Logger(WorkerLifecycle.name);
  private consumer: TrainingConsumer | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private backend: BackendName | null = null;
  private stopping = false;
  private die: (reason: string) => void = () => undefined;
  /** Resolves, with the reason, when the worker can no longer take jobs and must exit. */
  readonly fatal = new Promise<string>((resolve) => (this.die = resolve));

  constructor(
    private readonly queue: QueueRepository,
    private readonly workers: WorkerRepository,
    private readonly runner: JobRunnerService,
    private readonly evaluations: EvaluationRunnerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async start(): Promise<void> {
    shareCoresAmong(this.config.worker.slots);
    // Resolve the backend here too, so the worker reports what its jobs will run on.
    this.backend = await initBackend(this.config.worker.backend, (m) => this.logger.log(m));
    const consumer = await this.consume();
    this.consumer = consumer;
    consumer.run().then(
      () => this.lost('the queue consumer stopped'),
      (error: Error) => this.lost(`the queue consumer failed: ${error.message}`),
    );
    await this.announce();
    this.heartbeat = setInterval(() => void this.announce(), this.config.worker.heartbeatMs);
    this.evaluations.start();
    this.logger.log(`worker ${this.config.worker.name} consuming ${this.config.worker.device} jobs with ${this.config.worker.slots} slot(s) on ${this.backend}`);
  }

  /**
   * Waits for Postgres and Redis (the namespace needs both); a namespace of another deployment
   * stops the worker. First, before this process's first heartbeat (so their usage ends when the
   * earlier process was last heard from), jobs and evaluations an earlier process of this name
   * left running are given back.
   */
  private async consume(): Promise<TrainingConsumer> {
    let reclaimed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        if (!reclaimed) {
          await this.runner.requeueLeftovers();
          await this.evaluations.reclaim();
          reclaimed = true;
        }
        return await this.queue.consumeTraining((job) => this.runner.run(job.data.jobId), this.config.worker.slots, this.config.worker.device);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        if (attempt === 1 || attempt % 30 === 0) this.logger.warn(`waiting for the queue: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.logger.log(`worker ${this.config.worker.name} stopping: checkpointing and requeueing ${this.runner.running} job(s)`);
    this.runner.stopAll();
    this.evaluations.stop();
    await this.consumer?.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.workers.remove(this.config.worker.name).catch(() => undefined);
  }

  private lost(reason: string): void {
    if (this.stopping) return;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.logger.error(`worker ${this.config.worker.name}: ${reason}; exiting so that its supervisor starts it again`);
    this.die(reason);
  }

  private async announce(): Promise<void> {
    // A consumer that is no longer running takes nothing: announcing its slots would attract jobs.
    if (this.consumer && !this.consumer.isRunning() && !this.stopping) return this.lost('the queue consumer is not running');
    try {
      await this.workers.heartbeat({
        id: this.config.worker.name,
        hostname: hostname(),
        backend: this.backend ?? 'unknown',
        device: this.config.worker.device,
        slots: this.config.worker.slots,
        running: this.runner.running,
      });
    } catch (error) {
      this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
    }
  }
}

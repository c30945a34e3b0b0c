import { Inject, Injectable, Logger } from '@nestjs/common';
import { hostname } from 'node:os';
import { APP_CONFIG, AppConfig, ConfigError } from '../config/config';
import { QueueRepository, TrainingConsumer } from '../repositories/queue.repository';
import { WorkerRepository } from '../repositories/worker.repository';
import { EvaluationRunnerService } from './evaluation-runner.service';
import { JobRunnerService } from './job-runner.service';
import { BackendName, initBackend } from '../training/backend';

/**
 * Starts consuming only after the backend has been resolved and the worker announced itself;
 * on shutdown, checkpoints and requeues running jobs before the queue connection closes.
 */
@Injectable()
export class WorkerLifecycle {
  private readonly logger = new Logger(WorkerLifecycle.name);
  private consumer: TrainingConsumer | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private backend: BackendName | null = null;

  constructor(
    private readonly queue: QueueRepository,
    private readonly workers: WorkerRepository,
    private readonly runner: JobRunnerService,
    private readonly evaluations: EvaluationRunnerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async start(): Promise<void> {
    // Resolve the backend here too, so the worker reports what its jobs will run on.
    this.backend = await initBackend(this.config.worker.backend, (m) => this.logger.log(m));
    await this.announce();
    this.heartbeat = setInterval(() => void this.announce(), this.config.worker.heartbeatMs);
    this.consumer = await this.consume();
    void this.consumer.run();
    this.evaluations.start();
    this.logger.log(`worker ${this.config.worker.name} consuming ${this.config.worker.device} jobs with ${this.config.worker.slots} slot(s) on ${this.backend}`);
  }

  /** Waits for Postgres and Redis (the namespace needs both); a namespace of another deployment stops the worker. First, jobs an earlier process of this name left running go back to the queue. */
  private async consume(): Promise<TrainingConsumer> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.runner.requeueLeftovers();
        return await this.queue.consumeTraining((job) => this.runner.run(job.data.jobId), this.config.worker.slots, this.config.worker.device);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        if (attempt === 1 || attempt % 30 === 0) this.logger.warn(`waiting for the queue: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  async stop(): Promise<void> {
    this.logger.log(`worker ${this.config.worker.name} stopping: checkpointing and requeueing ${this.runner.running} job(s)`);
    this.runner.stopAll();
    this.evaluations.stop();
    await this.consumer?.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.workers.remove(this.config.worker.name).catch(() => undefined);
  }

  private async announce(): Promise<void> {
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

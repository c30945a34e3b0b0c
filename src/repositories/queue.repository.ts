import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Job as BullJob, Queue, Worker as BullWorker } from 'bullmq';
import IORedis, { RedisOptions } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/config';

/** Training jobs carried from the scheduler to workers, one queue per kind of worker. */
export type WorkerDevice = 'gpu' | 'cpu';
export const TRAINING_QUEUES: Record<WorkerDevice, string> = { gpu: 'training-gpu', cpu: 'training-cpu' };

/** Payload of a queued training job; the database row is the truth, so only its id travels. */
export interface TrainingJobData {
  jobId: string;
}

export type TrainingProcessor = (job: BullJob<TrainingJobData>, lockToken?: string) => Promise<void>;

/** A worker's consumer of its training queue: `run()` starts taking jobs, `close()` waits for those it holds. */
export type TrainingConsumer = BullWorker<TrainingJobData>;

/**
 * The only code that talks to BullMQ / Redis. Producers fail fast while Redis is down (the
 * job stays stored and the dispatcher retries), workers reconnect forever.
 */
@Injectable()
export class QueueRepository implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(QueueRepository.name);
  private producerConnection: IORedis | null = null;
  private readonly queues = new Map<WorkerDevice, Queue<TrainingJobData>>();
  private readonly workers: BullWorker<TrainingJobData>[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Connect at boot, so the first request does not find the producer still connecting. */
  onModuleInit(): void {
    this.trainingQueue('cpu');
  }

  private connectionOptions(): RedisOptions {
    const url = new URL(this.config.redisUrl);
    return {
      host: url.hostname,
      port: Number(url.port || 6379),
      username: url.username || undefined,
      password: url.password || undefined,
      db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
      tls: url.protocol === 'rediss:' ? {} : undefined,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    };
  }

  private trainingQueue(device: WorkerDevice): Queue<TrainingJobData> {
    if (!this.producerConnection) {
      // enableOfflineQueue false: while Redis is down, add() rejects at once instead of hanging.
      this.producerConnection = new IORedis({ ...this.connectionOptions(), enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      this.producerConnection.on('error', (error) => this.logger.warn(`redis: ${error.message}`));
    }
    let queue = this.queues.get(device);
    if (!queue) {
      queue = new Queue<TrainingJobData>(TRAINING_QUEUES[device], { connection: this.producerConnection, prefix: this.config.queuePrefix });
      queue.on('error', (error) => this.logger.warn(`queue: ${error.message}`));
      this.queues.set(device, queue);
    }
    return queue;
  }

  /** Idempotent: the BullMQ job id is the StarLab job id. Finished carriers are removed so a job can be sent again. */
  async enqueueTraining(jobId: string, device: WorkerDevice): Promise<void> {
    await this.trainingQueue(device).add('train', { jobId }, { jobId, removeOnComplete: true, removeOnFail: true });
  }

  /** Many at once (one round trip): what an admission pass sends. */
  async enqueueTrainingBatch(jobIds: string[], device: WorkerDevice): Promise<void> {
    if (jobIds.length === 0) return;
    await this.trainingQueue(device).addBulk(jobIds.map((jobId) => ({ name: 'train', data: { jobId }, opts: { jobId, removeOnComplete: true, removeOnFail: true } })));
  }

  /** Whether the carrier of a job is in Redis (lost after a Redis restart without persistence). */
  async hasTrainingJob(jobId: string, device: WorkerDevice): Promise<boolean> {
    return (await this.trainingQueue(device).getJob(jobId)) !== undefined;
  }

  /** Takes a not-yet-started carrier out of the queue (cancel, pause while queued). */
  async removeWaiting(jobId: string): Promise<void> {
    for (const device of ['gpu', 'cpu'] as const) {
      const job = await this.trainingQueue(device).getJob(jobId);
      if (job && (await job.isWaiting())) await job.remove();
    }
  }

  async ping(): Promise<boolean> {
    try {
      this.trainingQueue('cpu');
      if (this.producerConnection!.status !== 'ready') return false;
      await this.producerConnection!.ping();
      return true;
    } catch {
      return false;
    }
  }

  /** Starts consuming (worker processes only). The lock settings decide how fast a dead worker's job comes back. */
  consumeTraining(processor: TrainingProcessor, concurrency: number, device: WorkerDevice): TrainingConsumer {
    const worker = new BullWorker<TrainingJobData>(TRAINING_QUEUES[device], processor, {
      connection: new IORedis({ ...this.connectionOptions(), maxRetriesPerRequest: null }),
      prefix: this.config.queuePrefix,
      concurrency,
      lockDuration: this.config.worker.lockDurationMs,
      stalledInterval: this.config.worker.stalledIntervalMs,
      // A stalled job means "its worker died": always give it back, never fail it.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      autorun: false,
    });
    worker.on('error', (error) => this.logger.warn(`worker: ${error.message}`));
    this.workers.push(worker);
    return worker;
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.close()));
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.producerConnection?.disconnect();
  }
}

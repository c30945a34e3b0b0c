import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Job as BullJob, Queue, Worker as BullWorker } from 'bullmq';
import IORedis, { RedisOptions } from 'ioredis';
import { APP_CONFIG, AppConfig, ConfigError } from '../config/config';
import { LEGACY_PREFIX, Namespace, QueueNamespace } from './queue-namespace';

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
 *
 * Every key is under the deployment's namespace (QueueNamespace), which the deployment claims
 * in Redis (`<prefix>:deployment` = its database identity) before it sends or takes a job: a
 * namespace claimed by another database is refused with a ConfigError, so two deployments
 * configured with the same STARLAB_QUEUE_PREFIX never take each other's jobs.
 */
@Injectable()
export class QueueRepository implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(QueueRepository.name);
  private producerConnection: IORedis | null = null;
  private readonly queues = new Map<WorkerDevice, Queue<TrainingJobData>>();
  private readonly workers: BullWorker<TrainingJobData>[] = [];
  private claimed: Promise<Namespace> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly namespace: QueueNamespace,
  ) {}

  /**
   * Connect and claim the namespace at boot, so the first request does not find the producer
   * still connecting and a namespace taken by another deployment stops the process at once.
   * With Postgres or Redis down, both wait for the first use instead.
   */
  async onModuleInit(): Promise<void> {
    const connection = this.producer();
    if (connection.status !== 'ready') await Promise.race([new Promise((resolve) => connection.once('ready', resolve)), new Promise((resolve) => setTimeout(resolve, 2000))]);
    try {
      await this.claim();
    } catch (error) {
      if (error instanceof ConfigError) throw error;
    }
  }

  /** The namespace, once this deployment holds it in Redis (see the class comment). */
  claim(): Promise<Namespace> {
    this.claimed ??= this.claimNamespace().catch((error: unknown) => {
      this.claimed = null;
      throw error;
    });
    return this.claimed;
  }

  private async claimNamespace(): Promise<Namespace> {
    const namespace = await this.namespace.resolve();
    const key = `${namespace.prefix}:deployment`;
    const connection = this.producer();
    await connection.set(key, namespace.deploymentId, 'NX');
    const owner = await connection.get(key);
    if (owner !== namespace.deploymentId) {
      const setting = this.namespace.derived ? `the Redis namespace ${JSON.stringify(namespace.prefix)} (derived from this database's identity; is this database a copy?)` : `STARLAB_QUEUE_PREFIX ${JSON.stringify(namespace.prefix)}`;
      throw new ConfigError([`${setting} is in use on this Redis by another deployment (database ${owner}); give each deployment its own prefix`]);
    }
    return namespace;
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

  private producer(): IORedis {
    if (!this.producerConnection) {
      // enableOfflineQueue false: while Redis is down, add() rejects at once instead of hanging.
      this.producerConnection = new IORedis({ ...this.connectionOptions(), enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      this.producerConnection.on('error', (error) => this.logger.warn(`redis: ${error.message}`));
      // A Redis that restarted empty has forgotten the claim: make it again before the next send.
      this.producerConnection.on('ready', () => (this.claimed = null));
    }
    return this.producerConnection;
  }

  private async trainingQueue(device: WorkerDevice): Promise<Queue<TrainingJobData>> {
    const { prefix } = await this.claim();
    let queue = this.queues.get(device);
    if (!queue) {
      queue = new Queue<TrainingJobData>(TRAINING_QUEUES[device], { connection: this.producer(), prefix });
      queue.on('error', (error) => this.logger.warn(`queue: ${error.message}`));
      this.queues.set(device, queue);
    }
    return queue;
  }

  /** Idempotent: the BullMQ job id is the StarLab job id. Finished carriers are removed so a job can be sent again. */
  async enqueueTraining(jobId: string, device: WorkerDevice): Promise<void> {
    await (await this.trainingQueue(device)).add('train', { jobId }, { jobId, removeOnComplete: true, removeOnFail: true });
  }

  /** Many at once (one round trip): what an admission pass sends. */
  async enqueueTrainingBatch(jobIds: string[], device: WorkerDevice): Promise<void> {
    if (jobIds.length === 0) return;
    await (await this.trainingQueue(device)).addBulk(jobIds.map((jobId) => ({ name: 'train', data: { jobId }, opts: { jobId, removeOnComplete: true, removeOnFail: true } })));
  }

  /** Whether the carrier of a job is in Redis (lost after a Redis restart without persistence). */
  async hasTrainingJob(jobId: string, device: WorkerDevice): Promise<boolean> {
    return (await (await this.trainingQueue(device)).getJob(jobId)) !== undefined;
  }

  /** Takes a not-yet-started carrier out of the queue (cancel, pause while queued). */
  async removeWaiting(jobId: string): Promise<void> {
    for (const device of ['gpu', 'cpu'] as const) {
      const job = await (await this.trainingQueue(device)).getJob(jobId);
      if (job && (await job.isWaiting())) await job.remove();
    }
  }

  async ping(): Promise<boolean> {
    try {
      const connection = this.producer();
      if (connection.status !== 'ready') return false;
      await connection.ping();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Upgrade path from the former default prefix `starlab`, which every deployment shared:
   * carriers still waiting there whose job `isOurs` (is in this database) are taken out, and
   * their ids returned for the dispatcher to send again under this deployment's namespace.
   * Others' carriers, and ones a worker of the old version is running, are left alone. Only
   * with a derived prefix: a configured one is where the deployment wants its jobs.
   */
  async takeLegacyCarriers(isOurs: (jobIds: string[]) => Promise<string[]>): Promise<string[]> {
    const { prefix } = await this.claim();
    if (!this.namespace.derived || prefix === LEGACY_PREFIX) return [];
    const taken: string[] = [];
    for (const device of ['gpu', 'cpu'] as const) {
      const legacy = new Queue<TrainingJobData>(TRAINING_QUEUES[device], { connection: this.producer(), prefix: LEGACY_PREFIX });
      try {
        const carriers = await legacy.getJobs(['waiting', 'prioritized', 'delayed']);
        const ours = new Set(await isOurs(carriers.map((carrier) => carrier.data?.jobId).filter((id): id is string => typeof id === 'string')));
        for (const carrier of carriers.filter((c) => ours.has(c.data.jobId))) {
          // Fails if an old worker took it meanwhile: then it is that worker's.
          if (await carrier.remove().then(() => true, () => false)) taken.push(carrier.data.jobId);
        }
      } finally {
        await legacy.close();
      }
    }
    return taken;
  }

  /** Starts consuming (worker processes only). The lock settings decide how fast a dead worker's job comes back. */
  async consumeTraining(processor: TrainingProcessor, concurrency: number, device: WorkerDevice): Promise<TrainingConsumer> {
    const { prefix } = await this.claim();
    const worker = new BullWorker<TrainingJobData>(TRAINING_QUEUES[device], processor, {
      connection: new IORedis({ ...this.connectionOptions(), maxRetriesPerRequest: null }),
      prefix,
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

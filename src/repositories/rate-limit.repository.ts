import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import IORedis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/config';
import { QueueNamespace } from './queue-namespace';

/**
 * Request counters in Redis (fixed windows), shared by every API replica. Redis here is a
 * limiter, not a record: while it is unreachable, requests are not limited.
 */
@Injectable()
export class RateLimitRepository implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RateLimitRepository.name);
  private redis: IORedis | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly namespace: QueueNamespace,
  ) {}

  /** Connect at boot (best effort), so limits apply from the first request. */
  async onModuleInit(): Promise<void> {
    await Promise.race([this.client().connect().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000))]);
  }

  private client(): IORedis {
    if (!this.redis) {
      // No offline queue: while Redis is down a request is not held back, it is just not counted.
      this.redis = new IORedis(this.config.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      this.redis.on('error', (error) => this.logger.debug(`redis: ${error.message}`));
    }
    return this.redis;
  }

  /** Counts one request of `subject` in the current window; null when Redis cannot answer (or the namespace is not known yet). */
  async hit(subject: string, windowMs: number): Promise<{ count: number; resetMs: number } | null> {
    try {
      const { prefix } = await this.namespace.resolve();
      const key = `${prefix}:ratelimit:${subject}:${Math.floor(Date.now() / windowMs)}`;
      const result = await this.client().multi().incr(key).pexpire(key, windowMs).exec();
      const count = Number(result?.[0]?.[1] ?? 0);
      return { count, resetMs: windowMs - (Date.now() % windowMs) };
    } catch {
      return null;
    }
  }

  /** How many of `subject` the current window has counted (without counting one); null when Redis cannot answer. */
  async count(subject: string, windowMs: number): Promise<{ count: number; resetMs: number } | null> {
    try {
      const { prefix } = await this.namespace.resolve();
      const value = await this.client().get(`${prefix}:ratelimit:${subject}:${Math.floor(Date.now() / windowMs)}`);
      return { count: Number(value ?? 0), resetMs: windowMs - (Date.now() % windowMs) };
    } catch {
      return null;
    }
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}

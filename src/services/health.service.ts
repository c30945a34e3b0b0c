import { Injectable } from '@nestjs/common';
import type { ReadinessView } from '../contracts/operations.dto';
import { HealthRepository } from '../repositories/health.repository';
import { QueueRepository } from '../repositories/queue.repository';

/** Readiness of this process: are the database and Redis reachable right now. */
@Injectable()
export class HealthService {
  constructor(
    private readonly database: HealthRepository,
    private readonly queue: QueueRepository,
  ) {}

  async readiness(): Promise<ReadinessView> {
    const [database, redis] = await Promise.all([this.database.databaseReachable(), this.queue.ping()]);
    return { status: database && redis ? 'ready' : 'degraded', database: database ? 'up' : 'down', redis: redis ? 'up' : 'down' };
  }
}

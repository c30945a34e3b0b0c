import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig, loadConfig } from './config/config';
import { AuditRepository } from './repositories/audit.repository';
import { EvaluationRepository } from './repositories/evaluation.repository';
import { HealthRepository } from './repositories/health.repository';
import { JobRepository } from './repositories/job.repository';
import { JobRowCache } from './repositories/job-row-cache';
import { DATABASE_URL, PrismaService } from './repositories/prisma.service';
import { QueueNamespace } from './repositories/queue-namespace';
import { ProgressRepository } from './repositories/progress.repository';
import { QueueRepository } from './repositories/queue.repository';
import { ResultsRepository } from './repositories/results.repository';
import { UserRepository } from './repositories/user.repository';
import { SchedulingRepository } from './repositories/scheduling.repository';
import { TelemetryRepository } from './repositories/telemetry.repository';
import { UsageRepository } from './repositories/usage.repository';
import { WebhookRepository } from './repositories/webhook.repository';
import { WebhookTransport } from './repositories/webhook-transport';
import { WorkerRepository } from './repositories/worker.repository';

const repositories = [PrismaService, JobRowCache, QueueNamespace, QueueRepository, JobRepository, ResultsRepository, UserRepository, WorkerRepository, HealthRepository, WebhookRepository, SchedulingRepository, UsageRepository, AuditRepository, WebhookTransport, TelemetryRepository, EvaluationRepository, ProgressRepository];

/** Config and every adapter to the outside world, shared by the API and the worker. */
@Global()
@Module({
  providers: [
    { provide: APP_CONFIG, useFactory: () => loadConfig() },
    { provide: DATABASE_URL, useFactory: (config: AppConfig) => config.databaseUrl, inject: [APP_CONFIG] },
    ...repositories,
  ],
  exports: [APP_CONFIG, DATABASE_URL, ...repositories],
})
export class CoreModule {}

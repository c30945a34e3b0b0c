import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig, loadConfig } from './config/config';
import { AuditRepository } from './repositories/audit.repository';
import { EnvironmentServerRepository } from './repositories/environment-server.repository';
import { EvaluationRepository } from './repositories/evaluation.repository';
import { HealthRepository } from './repositories/health.repository';
import { JobLifecycleRepository } from './repositories/job-lifecycle.repository';
import { JobRepository } from './repositories/job.repository';
import { JobRowCache } from './repositories/job-row-cache';
import { DATABASE_URL, PrismaService } from './repositories/prisma.service';
import { QueueNamespace } from './repositories/queue-namespace';
import { ProcessRepository } from './repositories/process.repository';
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
import { ArchiveRepository } from './repositories/archive.repository';
import { ExperimentRepository } from './repositories/experiment.repository';
import { ReferencesRepository } from './repositories/references.repository';

const repositories = [PrismaService, JobRowCache, QueueNamespace, QueueRepository, JobRepository, JobLifecycleRepository, ProcessRepository, ResultsRepository, UserRepository, WorkerRepository, HealthRepository, WebhookRepository, SchedulingRepository, UsageRepository, AuditRepository, EnvironmentServerRepository, WebhookTransport, TelemetryRepository, EvaluationRepository, ProgressRepository, ExperimentRepository, ArchiveRepository, ReferencesRepository];

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

import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ApiKeysController } from './api/api-keys.controller';
import { AuditController } from './api/audit.controller';
import { ApiKeyGuard } from './api/auth.guard';
import { InputGuardPipe } from './api/input-guard';
import { CatalogController } from './api/catalog.controller';
import { EnvironmentsController } from './api/environments.controller';
import { CheckpointActionsController } from './api/checkpoint-actions.controller';
import { CheckpointsController } from './api/checkpoints.controller';
import { JobsController } from './api/jobs.controller';
import { LabController } from './api/lab.controller';
import { OperationsController } from './api/operations.controller';
import { ProblemFilter } from './api/problem.filter';
import { TeamsController } from './api/teams.controller';
import { UsersController } from './api/users.controller';
import { WebhooksController } from './api/webhooks.controller';
import { ExperimentsController } from './api/experiments.controller';
import { ArchiveService } from './services/archive.service';
import { ExperimentService } from './services/experiment.service';
import { WarmupService } from './services/warmup.service';
import { CoreModule } from './core.module';
import { ApiKeyService } from './services/api-key.service';
import { AuditService } from './services/audit.service';
import { AuthService } from './services/auth.service';
import { CatalogService } from './services/catalog.service';
import { EnvironmentService } from './services/environment.service';
import { CheckpointActionsService } from './services/checkpoint-actions.service';
import { DispatchService } from './services/dispatch.service';
import { EvaluationService } from './services/evaluation.service';
import { HealthService } from './services/health.service';
import { JobService } from './services/job.service';
import { LabService } from './services/lab.service';
import { PrincipalCache } from './services/principal-cache';
import { RateLimitService } from './services/rate-limit.service';
import { RateLimitRepository } from './repositories/rate-limit.repository';
import { ResultsService } from './services/results.service';
import { TeamService } from './services/team.service';
import { MetricsCollector } from './services/metrics-collector';
import { TelemetryService } from './services/telemetry.service';
import { UserService } from './services/user.service';
import { WebhookService } from './services/webhook.service';

/** The HTTP API process: validates, stores, dispatches and reads; never trains. */
@Module({
  imports: [CoreModule],
  controllers: [JobsController, CheckpointActionsController, LabController, CheckpointsController, CatalogController, EnvironmentsController, UsersController, ApiKeysController, TeamsController, AuditController, WebhooksController, OperationsController, ExperimentsController],
  providers: [
    ArchiveService,
    AuthService,
    ExperimentService,
    WarmupService,
    ApiKeyService,
    AuditService,
    UserService,
    TeamService,
    CatalogService,
    EnvironmentService,
    CheckpointActionsService,
    DispatchService,
    EvaluationService,
    HealthService,
    JobService,
    LabService,
    PrincipalCache,
    RateLimitService,
    RateLimitRepository,
    ResultsService,
    MetricsCollector,
    TelemetryService,
    WebhookService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_FILTER, useClass: ProblemFilter },
    { provide: APP_PIPE, useClass: InputGuardPipe },
  ],
})
export class ApiModule {}

import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ApiKeyGuard } from './api/auth.guard';
import { CatalogController } from './api/catalog.controller';
import { CheckpointsController } from './api/checkpoints.controller';
import { JobsController } from './api/jobs.controller';
import { OperationsController } from './api/operations.controller';
import { ProblemFilter } from './api/problem.filter';
import { UsersController } from './api/users.controller';
import { CoreModule } from './core.module';
import { AuthService } from './services/auth.service';
import { CatalogService } from './services/catalog.service';
import { DispatchService } from './services/dispatch.service';
import { JobService } from './services/job.service';
import { ResultsService } from './services/results.service';
import { TelemetryService } from './services/telemetry.service';

/** The HTTP API process: validates, stores, dispatches and reads; never trains. */
@Module({
  imports: [CoreModule],
  controllers: [JobsController, CheckpointsController, CatalogController, UsersController, OperationsController],
  providers: [
    AuthService,
    CatalogService,
    DispatchService,
    JobService,
    ResultsService,
    TelemetryService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_FILTER, useClass: ProblemFilter },
  ],
})
export class ApiModule {}

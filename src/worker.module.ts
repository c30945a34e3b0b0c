import { Module } from '@nestjs/common';
import { CoreModule } from './core.module';
import { EvaluationRunnerService } from './worker/evaluation-runner.service';
import { JobRunnerService } from './worker/job-runner.service';
import { WorkerLifecycle } from './worker/worker-lifecycle';

/** The worker process: consumes the training queue and plays evaluations; no public HTTP. */
@Module({
  imports: [CoreModule],
  providers: [JobRunnerService, EvaluationRunnerService, WorkerLifecycle],
})
export class WorkerModule {}

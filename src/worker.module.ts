import { Module } from '@nestjs/common';
import { CoreModule } from './core.module';
import { JobRunnerService } from './worker/job-runner.service';
import { WorkerLifecycle } from './worker/worker-lifecycle';

/** The worker process: consumes the training queue; no public HTTP. */
@Module({
  imports: [CoreModule],
  providers: [JobRunnerService, WorkerLifecycle],
})
export class WorkerModule {}

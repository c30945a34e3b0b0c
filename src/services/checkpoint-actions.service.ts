import { Injectable, Logger } from '@nestjs/common';
import type { ForkJobBody, RollbackJobBody } from '../contracts/checkpoint-actions.dto';
import type { JobView } from '../contracts/jobs.dto';
import { JobLifecycleRepository } from '../repositories/job-lifecycle.repository';
import { JobRepository, JobRow } from '../repositories/job.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { forkSpec } from '../training/fork';
import { EnvironmentServerRepository } from '../repositories/environment-server.repository';
import { parseStoredJobSpec } from '../training/spec/validate';
import { canControl } from './access';
import type { Principal } from './auth.service';
import { DispatchService } from './dispatch.service';
import { Conflict, NotFound } from './errors';
import { JobService, newJob } from './job.service';
import { refusal, TRANSITIONS } from './job-lifecycle';

/** What a user does with a job's checkpoints: start a new job from one, or go back to one. */
@Injectable()
export class CheckpointActionsService {
  private readonly logger = new Logger(CheckpointActionsService.name);

  constructor(
    private readonly jobService: JobService,
    private readonly jobs: JobRepository,
    private readonly lifecycle: JobLifecycleRepository,
    private readonly results: ResultsRepository,
    private readonly dispatch: DispatchService,
    private readonly environments: EnvironmentServerRepository,
  ) {}

  /**
   * A new job of the caller's that continues from a checkpoint of a job they can read, with
   * overrides (training.learningRate, training.steps, …); it keeps the source's vocabulary and
   * model, and trains from the checkpoint's step on. Queued like a submission (same quota).
   */
  async fork(principal: Principal, jobId: string, body: ForkJobBody): Promise<JobView> {
    const source = await this.jobService.readable(principal, jobId);
    const checkpoint = await this.checkpoint(source, body.checkpointId, 'latest');
    const name = body.name ?? `${source.name.slice(0, 110)}-fork-${checkpoint.step}`;
    const spec = forkSpec(parseStoredJobSpec(source.spec, await this.environments.definitionFor(source.spec)), checkpoint.step, body.overrides ?? {}, name, 'body.overrides');
    const job = await this.jobs.createFork(
      {
        ...newJob(principal, spec),
        parentJobId: source.id,
        parentStep: checkpoint.step,
        progress: checkpoint.step / spec.training.steps,
      },
      checkpoint.id,
      `queued: forked by ${principal.name} from job ${source.id} at step ${checkpoint.step}`,
      (owner) => this.jobService.admitQueued(owner),
    );
    this.logger.log(`job ${job.id} forked by ${principal.name} from job ${source.id} at step ${checkpoint.step}`);
    this.dispatch.kick();
    return this.jobService.view(job);
  }

  /**
   * Back to a checkpoint, by hand: the chosen one or the newest healthy one. What the job
   * produced after it is forgotten and it is queued again to train on from there (optionally with
   * another learning rate), in one transaction, as a collapse rule's rollback does. The job must
   * have stopped (paused, failed, succeeded or cancelled): pause a running job first.
   */
  async rollback(principal: Principal, jobId: string, body: RollbackJobBody): Promise<JobView> {
    const job = await this.jobService.readable(principal, jobId);
    if (!canControl(principal, job)) throw new NotFound('job', jobId);
    const refused = refusal('rollBack', job.status);
    if (refused) throw new Conflict(`job ${jobId} ${refused}: pause it first`);
    const target = await this.checkpoint(job, body.checkpointId, 'healthy');
    // Going back to where the job stands would queue it to train nothing new (a job that
    // succeeded at its last step would take a slot for nothing): resume or fork it instead. A job
    // that failed or was cancelled short of its steps (its environment server went down) goes on
    // from its last checkpoint this way.
    if (target.step === job.currentStep && (job.status === 'paused' || job.currentStep >= job.totalSteps)) {
      throw new Conflict(`job ${jobId} already stands on the checkpoint at step ${target.step}; ${job.status === 'paused' ? 'resume it' : 'fork it to train on with other settings'}`);
    }
    const spec = parseStoredJobSpec(job.spec, await this.environments.definitionFor(job.spec));
    const learningRate = body.learningRate ?? spec.training.learningRate;
    spec.training.learningRate = learningRate;
    const message = `rolled back by ${principal.name} to the ${target.health} checkpoint at step ${target.step}` + (body.learningRate === undefined ? '' : `; learning rate ${learningRate}`);
    const rolledBack = await this.lifecycle.rollBack(
      jobId,
      TRANSITIONS.rollBack,
      target.step,
      { spec: spec as unknown as object, currentStep: target.step, progress: target.step / job.totalSteps, error: null, finishedAt: null, dispatchedAt: null, dispatchedDevice: null, workerId: null, controlRequest: null, archivedAt: null },
      { message, data: { action: 'rollback', manual: true, actor: principal.name, toStep: target.step, checkpointId: target.id, learningRate } },
    );
    if (!rolledBack) throw new Conflict(`job ${jobId} changed state meanwhile; read it and try again`);
    this.logger.log(`job ${jobId}: ${message}`);
    this.dispatch.kick();
    return this.jobService.view(rolledBack);
  }

  /** The named checkpoint of the job, else its latest (or newest healthy) one. */
  private async checkpoint(job: JobRow, checkpointId: string | undefined, fallback: 'latest' | 'healthy') {
    if (checkpointId !== undefined) {
      const chosen = await this.results.checkpointOf(job.id, checkpointId);
      if (!chosen) throw new NotFound('checkpoint', `${checkpointId} of job ${job.id}`);
      return chosen;
    }
    const found = fallback === 'latest' ? await this.results.latestCheckpoint(job.id) : await this.results.latestHealthyCheckpoint(job.id, 2 ** 31 - 1);
    if (!found) throw new Conflict(`job ${job.id} has no ${fallback === 'latest' ? '' : 'healthy '}checkpoint yet${fallback === 'healthy' ? '; name one with checkpointId' : ''}`);
    return found;
  }
}

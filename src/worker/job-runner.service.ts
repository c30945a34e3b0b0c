import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { ControlRequest } from '../contracts/jobs.dto';
import { AttemptLost, AttemptToken, JobLifecycleRepository, StartedAttempt } from '../repositories/job-lifecycle.repository';
import { JobRepository, JobRow } from '../repositories/job.repository';
import { ProcessRepository } from '../repositories/process.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { WebhookRepository } from '../repositories/webhook.repository';
import { allows, TRANSITIONS } from '../services/job-lifecycle';
import { withRetry } from '../services/retry';
import type { CollapseWarning } from '../training/signals/collapse';
import { JobSpec, parseStoredJobSpec } from '../training/spec/validate';
import { EnvironmentServerRepository, environmentIdOf, serverAddress, storedDefinition } from '../repositories/environment-server.repository';
import type { ServedAddress } from './training-protocol';
import { FinalStates } from './final-states';
import { jobSink } from './job-sink';
import { AttemptContext, AttemptOutcome, PlannedRollback, settle, StopReason } from './settlement';
import { TrainingProcess } from './training-runner';

/** Warning again within this many steps of a rollback's checkpoint means it did not help (the detectors' smoothing window). */
const RELAPSE_STEPS = 10;

type Failures = Pick<AttemptContext, 'failedAttempts' | 'maxFailedAttempts'>;

/**
 * Runs one job on this worker: re-validates the stored spec, begins a new attempt (which fences
 * out any earlier one: JobLifecycleRepository.start), resumes from the last checkpoint, trains
 * in a child process, persists every report under the attempt's token, obeys cancel / pause /
 * preempt requests, and settles the job's final state.
 *
 * Once the attempt has begun, every way out stores a final state (docs/failure-behaviour.md):
 * a failure of the runner itself (a result that could not be stored within
 * STARLAB_WRITE_DEADLINE_MS) is a failed attempt, requeued until STARLAB_MAX_FAILED_ATTEMPTS,
 * then failed with the reason. A final state that cannot be stored within the deadline either
 * is stored in the background, so `run()` returns and the slot is free at once. An attempt that
 * learns it lost the job (a write refused by the fence, or the control poll) kills its training
 * at once and stores nothing more: the job is another attempt's.
 */
@Injectable()
export class JobRunnerService implements OnModuleDestroy {
  private readonly logger = new Logger(JobRunnerService.name);
  private readonly active = new Map<string, { process: TrainingProcess; stop: (reason: StopReason) => void }>();
  private readonly finalStates: FinalStates;

  constructor(
    private readonly jobs: JobRepository,
    private readonly lifecycle: JobLifecycleRepository,
    private readonly results: ResultsRepository,
    private readonly webhooks: WebhookRepository,
    private readonly processes: ProcessRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly environments: EnvironmentServerRepository,
  ) {
    this.finalStates = new FinalStates({ lifecycle, webhooks }, (what, operation) => this.retried(what, operation), this.logger);
  }

  get running(): number {
    return this.active.size;
  }

  /** Jobs whose final state is still being stored in the background (they hold no slot). */
  get settling(): number {
    return this.finalStates.pending;
  }

  /** Stops every job gracefully (checkpoint first) and requeues it: SIGTERM. */
  stopAll(): void {
    for (const entry of this.active.values()) entry.stop('shutdown');
  }

  /**
   * Gives up storing final states in the background: such a job stays `running` on this worker,
   * which the scheduler requeues once the worker has stopped heart-beating (docs/scheduling.md).
   */
  onModuleDestroy(): void {
    this.finalStates.close();
  }

  /**
   * At the worker's start, before it takes a job or heart-beats: jobs the database says this
   * worker runs were held by an earlier process of the same name (STARLAB_WORKER_NAME fixed,
   * the process restarted before the scheduler saw it gone), whose final state was not stored.
   * Back to the queue with them, their usage closed when that process was last heard from; a
   * pending cancel or pause request stays on the job.
   */
  async requeueLeftovers(): Promise<number> {
    const name = this.config.worker.name;
    let requeued = 0;
    for (const { id, attempt } of await this.jobs.runningOn(name)) {
      const row = await this.lifecycle.transition(
        id,
        TRANSITIONS.reclaim,
        { workerId: null, dispatchedAt: null, dispatchedDevice: null },
        { message: `requeued: worker ${name} restarted while it held the job`, data: { status: 'queued', worker: name } },
        { attempt, workerId: name },
      );
      if (row) requeued++;
    }
    if (requeued > 0) this.logger.warn(`requeued ${requeued} job(s) an earlier process of ${name} held`);
    return requeued;
  }

  /** The registration a stored spec names: null for a built-in, 'gone' for an id no longer registered. */
  async run(jobId: string): Promise<void> {
    const job = await this.retried('read the job', () => this.jobs.findById(jobId));
    if (!job || !allows('start', job.status)) {
      this.logger.log(`job ${jobId}: nothing to do (${job?.status ?? 'deleted'})`);
      return;
    }
    const failures: Failures = { failedAttempts: job.failedAttempts, maxFailedAttempts: this.config.worker.maxFailedAttempts };
    // The stored spec was validated at submission; validate again: the row is input too (and a
    // spec stored before version 2 runs as it did then).
    let spec: JobSpec;
    let served: ServedAddress | null = null;
    let registered: Awaited<ReturnType<EnvironmentServerRepository['registrationOrGone']>>;
    try {
      registered = await this.retried('read the environment registration', () => this.environments.registrationOrGone(job.spec));
    } catch (error) {
      // The database, not the job, is at fault: the job waits for another attempt, as when its start cannot be stored.
      return this.startFailed(job, (error as Error).message, failures);
    }
    try {
      if (registered === 'gone') throw new RegistrationGone(`environment '${environmentIdOf(job.spec)}' is not registered any more (an admin deleted it); register it again to train on it`);
      spec = parseStoredJobSpec(job.spec, registered ? storedDefinition(registered) : undefined);
      if (registered) served = { id: registered.id, address: serverAddress(registered), digest: registered.digest };
    } catch (error) {
      const reason = error instanceof RegistrationGone ? error.message : `the stored spec is not valid: ${(error as Error).message}`;
      return this.beforeStart(job, 'refuse', { error: reason, finishedAt: new Date(), controlRequest: null }, `failed: ${reason}`, { event: 'job.failed', detail: { error: reason } });
    }
    // A request pending from before (a worker restarted, an attempt lost while it was asked).
    if (job.controlRequest === 'cancel') return this.beforeStart(job, 'cancelUnstarted', { finishedAt: new Date(), controlRequest: null }, 'cancelled', { event: 'job.cancelled', detail: {} });
    if (job.controlRequest === 'pause') return this.beforeStart(job, 'pauseUnstarted', { controlRequest: null, dispatchedAt: null, dispatchedDevice: null, workerId: null }, 'paused before it started', { event: 'job.paused', detail: { step: job.currentStep } });
    const worker = { id: this.config.worker.name, device: this.config.worker.device };
    let started: StartedAttempt | null;
    try {
      started = await this.retried('mark the job running', () =>
        this.lifecycle.start(jobId, TRANSITIONS.start, job.attempt, worker, (fromStep, attempt) => `running on ${worker.id} (attempt ${attempt}${fromStep === null ? '' : `, resuming from step ${fromStep}`})`),
      );
    } catch (error) {
      return this.startFailed(job, (error as Error).message, failures);
    }
    if (!started) return; // another worker began an attempt first
    const { token } = started;
    this.logger.log(`job ${jobId}: attempt ${token.attempt} on ${worker.id}${started.fromStep === null ? '' : `, resuming from step ${started.fromStep}`}`);
    let outcome: AttemptOutcome;
    let reason: StopReason | null = null;
    let trigger: CollapseWarning | null = null;
    let endedAt = new Date();
    try {
      ({ outcome, reason, trigger } = await this.attempt(started, spec, served));
      endedAt = new Date();
    } catch (error) {
      if (error instanceof AttemptLost) return this.lost(token);
      outcome = { status: 'runner-failed', error: (error as Error).message };
    }
    const context: AttemptContext = { trigger, ...failures };
    if (reason === 'rollback') context.rollback = (await this.planRollback(started.row, spec, trigger).catch(() => null)) ?? undefined;
    await this.finalStates.store(started.row, token, endedAt, (pending) => settle(reason, outcome, context, pending));
  }

  /**
   * One attempt's training, from the checkpoint to how it stopped; throws when the runner itself
   * fails, AttemptLost when the attempt lost its job (its child is killed then).
   */
  private async attempt({ row: job, token, fromStep }: StartedAttempt, spec: JobSpec, served: ServedAddress | null): Promise<{ outcome: AttemptOutcome; reason: StopReason | null; trigger: CollapseWarning | null }> {
    const jobId = job.id;
    const checkpoint = fromStep === null ? null : await this.retried('read the checkpoint', () => this.results.checkpointBytesAt(jobId, fromStep));
    let stopReason: StopReason | null = null;
    let trigger: CollapseWarning | null = null;
    let lost = false;
    let unregistered = false;
    const stop = (reason: StopReason) => {
      if (stopReason === 'cancel' || stopReason === 'rollback') return;
      stopReason = reason;
      // Cancel needs nothing more; a rollback returns to an earlier checkpoint anyway.
      if (reason === 'cancel' || reason === 'rollback') training.kill();
      else training.stop();
    };
    const loseJob = () => {
      if (lost) return;
      lost = true;
      training.kill();
    };
    const onWarnings = (warnings: CollapseWarning[]) => {
      const actionable = warnings.find((w) => w.severity !== 'info');
      if (!actionable || spec.collapse.action === 'warn' || stopReason) return;
      trigger = actionable;
      stop(spec.collapse.action === 'pause' ? 'collapse-pause' : spec.collapse.action === 'stop' ? 'collapse-stop' : 'rollback');
    };
    // A write the fence refuses means the job is another attempt's: stop training at once.
    const write = <T>(what: string, operation: () => Promise<T>) =>
      this.withDeadline(`job ${jobId}: ${what}`, operation, () => stopReason === 'cancel' || lost).catch((error: unknown) => {
        if (error instanceof AttemptLost) loseJob();
        throw error;
      });
    const sink = jobSink({ lifecycle: this.lifecycle, webhooks: this.webhooks }, job, token, { totalSteps: spec.training.steps, checkpointsKept: this.config.checkpointsKept }, write, onWarnings);
    const training = new TrainingProcess(this.processes, spec, this.config.worker.backend, checkpoint, sink, { warmupCache: this.config.worker.warmupCache, served });
    this.logger.log(`job ${jobId}: attempt ${token.attempt} trains in process ${training.pid ?? '(not started)'}`);
    this.active.set(jobId, { process: training, stop });
    const poll = setInterval(() => {
      this.jobs
        .findById(jobId)
        .then((row) => {
          if (!row || row.status !== 'running' || row.attempt !== token.attempt || row.workerId !== token.workerId) return loseJob();
          const request = row.controlRequest as ControlRequest | null;
          if (request) stop(request);
          // A registration deleted under a running job: stop training on a server nobody vouches for.
          if (served && !stopReason && !unregistered) {
            return this.environments.find(served.id).then((registration) => {
              if (registration || unregistered) return;
              unregistered = true;
              training.kill();
            });
          }
        })
        .catch(() => undefined);
    }, this.config.worker.controlPollMs);
    const startedAt = Date.now();
    let outcome: AttemptOutcome;
    try {
      outcome = await training.outcome;
    } finally {
      clearInterval(poll);
      this.active.delete(jobId);
    }
    if (lost) throw new AttemptLost(token);
    if (unregistered && !stopReason) {
      outcome = { status: 'failed', error: `environment '${served!.id}' was deleted by an admin while the job trained on it; its checkpoints are kept: register the server again under that id and roll the job back to go on` };
    }
    const detail = 'error' in outcome ? `: ${outcome.error}` : '';
    this.logger.log(`job ${jobId}: ${outcome.status}${detail} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    return { outcome, reason: stopReason, trigger };
  }

  /** A job settled before an attempt begins, as `event`, if it is still at the attempt this worker saw. */
  private async beforeStart(job: JobRow, event: 'refuse' | 'cancelUnstarted' | 'pauseUnstarted', data: Parameters<JobLifecycleRepository['transition']>[2], message: string, notify: { event: 'job.failed' | 'job.cancelled' | 'job.paused'; detail: Record<string, unknown> }): Promise<void> {
    const row = await this.retried(`store the job ${TRANSITIONS[event].to}`, () => this.lifecycle.transition(job.id, TRANSITIONS[event], data, { message }, { attempt: job.attempt }));
    if (!row) return;
    this.logger.log(`job ${job.id}: ${message}`);
    await this.retried('the webhook', () => this.webhooks.enqueue(job.ownerId, notify.event, { type: notify.event, timestamp: new Date().toISOString(), data: { jobId: job.id, jobName: job.name, ...notify.detail } }));
  }

  /**
   * The attempt could not be begun within the write deadline. It may have been stored with only
   * the answer lost: then it is this worker's, and ends as a failed attempt. Otherwise the job
   * is still where it was, and the failed attempt is counted there.
   */
  private async startFailed(job: JobRow, error: string, failures: Failures): Promise<void> {
    const token: AttemptToken = { jobId: job.id, attempt: job.attempt + 1, workerId: this.config.worker.name };
    const context: AttemptContext = { trigger: null, ...failures };
    const outcome: AttemptOutcome = { status: 'runner-failed', error };
    try {
      await this.retried('end the attempt', () => this.lifecycle.settle(token, new Date(), (pending) => settle(null, outcome, context, pending).end));
      return;
    } catch (settleError) {
      if (!(settleError instanceof AttemptLost)) {
        this.logger.error(`job ${job.id}: ${error}; and the attempt could not be ended: ${(settleError as Error).message}`);
        return;
      }
    }
    const failedAttempts = failures.failedAttempts + 1;
    const count = `failed attempt ${failedAttempts} of ${failures.maxFailedAttempts}`;
    const exhausted = failedAttempts >= failures.maxFailedAttempts;
    const message = exhausted ? `failed: ${error} (${count})` : `requeued after ${count}: ${error}`;
    const data = exhausted ? { failedAttempts, error: `${error} (${count})`, finishedAt: new Date(), controlRequest: null } : { failedAttempts, dispatchedAt: null, dispatchedDevice: null };
    await this.retried('count the failed attempt', () => this.lifecycle.transition(job.id, exhausted ? TRANSITIONS.refuse : TRANSITIONS.skip, data, { message }, { attempt: job.attempt })).catch((countError: Error) =>
      this.logger.error(`job ${job.id}: ${error}; and the failed attempt could not be counted: ${countError.message}`),
    );
  }

  private lost(token: AttemptToken): void {
    this.logger.warn(`job ${token.jobId}: attempt ${token.attempt} lost the job to another attempt; its training was stopped and nothing more of it is stored`);
  }

  /** A database call retried like every write of a running job (docs/failure-behaviour.md); its error says what failed. */
  private retried<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return this.withDeadline(what, operation).catch((error: Error) => {
      if (error instanceof AttemptLost) throw error;
      throw new Error(`could not ${what}: ${error.message}`, { cause: error });
    });
  }

  private withDeadline<T>(what: string, operation: () => Promise<T>, abandon?: () => boolean): Promise<T> {
    return withRetry(operation, {
      deadlineMs: this.config.worker.writeDeadlineMs,
      abandon,
      onRetry: (error, attempt) => this.logger.warn(`${what} failed (attempt ${attempt}), retrying: ${error.message}`),
    });
  }

  /**
   * collapse.action = rollback: back to the newest healthy checkpoint before the warning, with
   * the spec's rollback overrides (lower learning rate, stronger filter), then requeued; stored
   * with the attempt's end as one transaction (JobLifecycleRepository.settle). Null when no
   * rollback is possible (the job stops).
   */
  private async planRollback(job: JobRow, spec: JobSpec, trigger: CollapseWarning | null): Promise<PlannedRollback | null> {
    if (!trigger || job.rollbacks >= spec.collapse.rollback.maxRollbacks) return null;
    // Detectors lag the update that broke a policy, so the checkpoint written just before a
    // warning can already hold broken weights. A run that warns again within RELAPSE_STEPS of the
    // checkpoint it was rolled back to did not recover from there: go back further than that.
    const previous = job.rollbacks > 0 ? await this.retried('read the last rollback', () => this.jobs.lastRollbackTarget(job.id)) : null;
    const relapsed = previous !== null && trigger.step - previous <= RELAPSE_STEPS;
    const target = await this.retried('find a healthy checkpoint', () => this.results.latestHealthyCheckpoint(job.id, relapsed ? previous - 1 : trigger.step));
    if (!target) return null;
    const next: JobSpec = structuredClone(spec);
    next.training.learningRate = spec.training.learningRate * spec.collapse.rollback.learningRateScale;
    if (spec.collapse.rollback.filterKeepFraction !== undefined) {
      next.algorithm.config.filter = 'std-top';
      next.algorithm.config.filterKeepFraction = spec.collapse.rollback.filterKeepFraction;
    }
    const message =
      `rolled back to healthy checkpoint at step ${target.step} after ${trigger.detector} at step ${trigger.step}; learning rate ${spec.training.learningRate} → ${next.training.learningRate}` +
      (spec.collapse.rollback.filterKeepFraction !== undefined ? `, filter keeps ${spec.collapse.rollback.filterKeepFraction}` : '');
    return {
      toStep: target.step,
      data: { spec: next as unknown as object, rollbacks: job.rollbacks + 1, currentStep: target.step },
      message,
      extra: { action: 'rollback', toStep: target.step, warning: { ...trigger }, learningRate: next.training.learningRate, filterKeepFraction: next.algorithm.config.filterKeepFraction },
    };
  }
}

/** A job on an environment whose registration an admin deleted: it cannot run. */
class RegistrationGone extends Error {}

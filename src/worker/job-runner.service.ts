import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobRepository, JobRow } from '../repositories/job.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { UsageRepository } from '../repositories/usage.repository';
import { WebhookRepository } from '../repositories/webhook.repository';
import type { CollapseWarning } from '../training/signals/collapse';
import { JobSpec, parseStoredJobSpec } from '../training/spec/validate';
import { withRetry } from '../services/retry';
import { FinalStates } from './final-states';
import { jobSink } from './job-sink';
import { afterFailure, AttemptContext, cancelled, settle, Settlement, StopReason, unrunnable } from './settlement';
import { TrainingOutcome, TrainingProcess } from './training-runner';

/** Warning again within this many steps of a rollback's checkpoint means it did not help (the detectors' smoothing window). */
const RELAPSE_STEPS = 10;

/**
 * Runs one job on this worker: re-validates the stored spec, resumes from the last
 * checkpoint, trains in a child process, persists every report, obeys cancel / pause /
 * preempt requests, and settles the job's final state.
 *
 * Once the job is marked running, every way out stores a final state (docs/failure-behaviour.md):
 * a failure of the runner itself (the usage record, a result that could not be stored within
 * STARLAB_WRITE_DEADLINE_MS) is a failed attempt, requeued until STARLAB_MAX_FAILED_ATTEMPTS,
 * then failed with the reason. A final state that cannot be stored within the deadline either
 * is stored in the background, so `run()` returns and the slot is free at once.
 */
@Injectable()
export class JobRunnerService implements OnModuleDestroy {
  private readonly logger = new Logger(JobRunnerService.name);
  private readonly active = new Map<string, { process: TrainingProcess; stop: (reason: StopReason) => void }>();
  private readonly finalStates: FinalStates;

  constructor(
    private readonly jobs: JobRepository,
    private readonly results: ResultsRepository,
    private readonly webhooks: WebhookRepository,
    private readonly usage: UsageRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.finalStates = new FinalStates({ jobs, results, usage, webhooks }, (what, operation) => this.retried(what, operation), this.logger);
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
   * At the worker's start, before it takes a job: jobs the database says this worker runs were
   * held by an earlier process of the same name (STARLAB_WORKER_NAME fixed, the process
   * restarted before the scheduler saw it gone), whose final state was not stored. Back to the
   * queue with them; a pending cancel or pause request stays on the job.
   */
  async requeueLeftovers(): Promise<number> {
    const name = this.config.worker.name;
    let requeued = 0;
    for (const { id } of await this.jobs.runningOn(name)) {
      const row = await this.jobs.transition(id, ['running'], { status: 'queued', workerId: null, dispatchedAt: null, dispatchedDevice: null }, { message: `requeued: worker ${name} restarted while it held the job`, data: { status: 'queued', worker: name } });
      if (row) requeued++;
    }
    if (requeued > 0) this.logger.warn(`requeued ${requeued} job(s) an earlier process of ${name} held`);
    return requeued;
  }

  async run(jobId: string): Promise<void> {
    const job = await this.retried('read the job', () => this.jobs.findById(jobId));
    if (!job || !['queued', 'running'].includes(job.status)) {
      this.logger.log(`job ${jobId}: nothing to do (${job?.status ?? 'deleted'})`);
      return;
    }
    const failures = { failedAttempts: job.failedAttempts, maxFailedAttempts: this.config.worker.maxFailedAttempts };
    // The stored spec was validated at submission; validate again: the row is input too (and a
    // spec stored before version 2 runs as it did then).
    let spec: JobSpec;
    try {
      spec = parseStoredJobSpec(job.spec);
    } catch (error) {
      return this.finalStates.store(job, unrunnable(`the stored spec is not valid: ${(error as Error).message}`));
    }
    if (job.controlRequest === 'cancel') return this.finalStates.store(job, cancelled());
    const checkpoint = await this.retried('read the checkpoint', () => this.results.latestCheckpoint(jobId));
    await this.retried('discard results after the checkpoint', () => this.results.discardAfter(jobId, checkpoint?.step ?? -1));
    const attempt = job.attempt + 1;
    const resumeNote = checkpoint ? `, resuming from step ${checkpoint.step}` : '';
    let started: JobRow | null;
    try {
      started = await this.retried('mark the job running', () =>
        this.jobs.transition(
          jobId,
          ['queued', 'running'],
          { status: 'running', attempt, workerId: this.config.worker.name, startedAt: job.startedAt ?? new Date(), currentStep: checkpoint?.step ?? 0, error: null },
          { message: `running on ${this.config.worker.name} (attempt ${attempt}${resumeNote})`, data: { status: 'running', attempt, worker: this.config.worker.name, fromStep: checkpoint?.step ?? null } },
        ),
      );
    } catch (error) {
      // Perhaps stored and only the answer lost: make sure the job is not left running.
      return this.finalStates.store(job, afterFailure(`could not mark the job running: ${(error as Error).message}`, failures));
    }
    if (!started) return;
    this.logger.log(`job ${jobId}: attempt ${attempt} on ${this.config.worker.name}${resumeNote}`);
    let settlement: Settlement;
    try {
      settlement = await this.attempt(started, spec, checkpoint?.bytes ?? null, failures);
    } catch (error) {
      settlement = afterFailure((error as Error).message, failures);
    }
    await this.finalStates.store(started, settlement);
  }

  /** One attempt, from the usage record to how it should end; throws when the runner itself fails. */
  private async attempt(job: JobRow, spec: JobSpec, checkpoint: Uint8Array | null, failures: Pick<AttemptContext, 'failedAttempts' | 'maxFailedAttempts'>): Promise<Settlement> {
    const jobId = job.id;
    await this.retried('open the usage record', () => this.usage.open({ jobId, userId: job.ownerId, workerId: this.config.worker.name, device: this.config.worker.device }));
    let stopReason: StopReason | null = null;
    let trigger: CollapseWarning | null = null;
    const stop = (reason: StopReason) => {
      if (stopReason === 'cancel' || stopReason === 'rollback') return;
      stopReason = reason;
      // Cancel needs nothing more; a rollback returns to an earlier checkpoint anyway.
      if (reason === 'cancel' || reason === 'rollback') process.kill();
      else process.stop();
    };
    const onWarnings = (warnings: CollapseWarning[]) => {
      const actionable = warnings.find((w) => w.severity !== 'info');
      if (!actionable || spec.collapse.action === 'warn' || stopReason) return;
      trigger = actionable;
      stop(spec.collapse.action === 'pause' ? 'collapse-pause' : spec.collapse.action === 'stop' ? 'collapse-stop' : 'rollback');
    };
    const cancelled = () => stopReason === 'cancel';
    // TrainingProcess names the report that could not be stored; the log names the job.
    const sink = jobSink({ jobs: this.jobs, results: this.results, webhooks: this.webhooks }, job, spec.training.steps, this.config.checkpointsKept, (what, operation) => this.withDeadline(`job ${jobId}: ${what}`, operation, cancelled), onWarnings);
    const process = new TrainingProcess(spec, this.config.worker.backend, checkpoint, sink, { warmupCache: this.config.worker.warmupCache });
    this.active.set(jobId, { process, stop });
    const poll = setInterval(() => {
      this.jobs
        .findById(jobId)
        .then((row) => {
          const request = row?.controlRequest;
          if (request === 'cancel' || request === 'pause' || request === 'preempt') stop(request);
        })
        .catch(() => undefined);
    }, this.config.worker.controlPollMs);
    const startedAt = Date.now();
    let outcome: TrainingOutcome;
    try {
      outcome = await process.outcome;
    } finally {
      clearInterval(poll);
      this.active.delete(jobId);
    }
    const detail = outcome.status === 'failed' || outcome.status === 'write-failed' ? `: ${outcome.error}` : '';
    this.logger.log(`job ${jobId}: ${outcome.status}${detail} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    // A cancel that came after the last poll (say, right behind a preempt that stopped the
    // process first) must not be lost to the requeue that preempt would settle on.
    const reason = ((await this.cancelledSince(jobId, stopReason, outcome)) ? 'cancel' : stopReason) as StopReason | null;
    const context: AttemptContext = { spec, trigger, ...failures };
    if (reason === 'rollback') {
      const rollback = await this.planRollback(job, context);
      if (rollback) return rollback;
    }
    return settle(reason, outcome, context);
  }

  /** A stopped attempt whose row now asks for a cancel the poll did not see. */
  private async cancelledSince(jobId: string, stopReason: StopReason | null, outcome: TrainingOutcome): Promise<boolean> {
    if (stopReason === null || stopReason === 'cancel' || outcome.status === 'completed') return false;
    const row = await this.jobs.findById(jobId).catch(() => null);
    return row?.controlRequest === 'cancel';
  }

  /** A database call retried like every write of a running job (docs/failure-behaviour.md); its error says what failed. */
  private retried<T>(what: string, operation: () => Promise<T>): Promise<T> {
    return this.withDeadline(what, operation).catch((error: Error) => {
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
   * as one transaction (ResultsRepository.rollBackTo). Null when no rollback is possible (the
   * job stops).
   */
  private async planRollback(job: JobRow, context: AttemptContext): Promise<Settlement | null> {
    const { spec, trigger } = context;
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
      kind: 'rollback',
      toStep: target.step,
      data: { status: 'queued', spec: next as unknown as object, rollbacks: job.rollbacks + 1, currentStep: target.step, dispatchedAt: null, workerId: null, controlRequest: null },
      message,
      extra: { action: 'rollback', toStep: target.step, warning: { ...trigger }, learningRate: next.training.learningRate, filterKeepFraction: next.algorithm.config.filterKeepFraction },
    };
  }
}

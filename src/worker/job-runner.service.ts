import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobRepository } from '../repositories/job.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { UsageRepository } from '../repositories/usage.repository';
import { WebhookRepository } from '../repositories/webhook.repository';
import type { CollapseWarning } from '../training/signals/collapse';
import { JobSpec, parseStoredJobSpec } from '../training/spec/validate';
import { TrainingOutcome, TrainingProcess, TrainingSink } from './training-runner';
import { withRetry } from '../services/retry';

/** How long a worker keeps retrying a write before it gives the job up (it resumes elsewhere). */
const WRITE_DEADLINE_MS = 5 * 60_000;

/** Warning again within this many steps of a rollback's checkpoint means it did not help (the detectors' smoothing window). */
const RELAPSE_STEPS = 10;

type StopReason = 'cancel' | 'pause' | 'preempt' | 'shutdown' | 'collapse-pause' | 'collapse-stop' | 'rollback';

/**
 * Runs one job on this worker: re-validates the stored spec, resumes from the last
 * checkpoint, trains in a child process, persists every report, obeys cancel / pause /
 * preempt requests, and settles the job's final state.
 */
@Injectable()
export class JobRunnerService {
  private readonly logger = new Logger(JobRunnerService.name);
  private readonly active = new Map<string, { process: TrainingProcess; stop: (reason: StopReason) => void }>();

  constructor(
    private readonly jobs: JobRepository,
    private readonly results: ResultsRepository,
    private readonly webhooks: WebhookRepository,
    private readonly usage: UsageRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get running(): number {
    return this.active.size;
  }

  /** Stops every job gracefully (checkpoint first) and requeues it: SIGTERM. */
  stopAll(): void {
    for (const entry of this.active.values()) entry.stop('shutdown');
  }

  async run(jobId: string): Promise<void> {
    const job = await this.jobs.findById(jobId);
    if (!job || !['queued', 'running'].includes(job.status)) {
      this.logger.log(`job ${jobId}: nothing to do (${job?.status ?? 'deleted'})`);
      return;
    }
    // The stored spec was validated at submission; validate again: the row is input too (and a
    // spec stored before version 2 runs as it did then).
    const spec = parseStoredJobSpec(job.spec);
    if (job.controlRequest === 'cancel') {
      await this.settle(jobId, 'cancel', { status: 'killed' }, { spec, trigger: null, ownerId: job.ownerId, name: job.name, rollbacks: job.rollbacks });
      return;
    }
    const checkpoint = await this.results.latestCheckpoint(jobId);
    await this.results.discardAfter(jobId, checkpoint?.step ?? -1);
    const attempt = job.attempt + 1;
    const resumeNote = checkpoint ? `, resuming from step ${checkpoint.step}` : '';
    const started = await this.jobs.transition(
      jobId,
      ['queued', 'running'],
      { status: 'running', attempt, workerId: this.config.worker.name, startedAt: job.startedAt ?? new Date(), currentStep: checkpoint?.step ?? 0, error: null },
      { message: `running on ${this.config.worker.name} (attempt ${attempt}${resumeNote})`, data: { status: 'running', attempt, worker: this.config.worker.name, fromStep: checkpoint?.step ?? null } },
    );
    if (!started) return;
    await withRetry(() => this.usage.open({ jobId, userId: job.ownerId, workerId: this.config.worker.name, device: this.config.worker.device }), { deadlineMs: WRITE_DEADLINE_MS });
    this.logger.log(`job ${jobId}: attempt ${attempt} on ${this.config.worker.name}${resumeNote}`);

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
    const sink = this.sink(job, spec.training.steps, () => stopReason === 'cancel', onWarnings);
    const process = new TrainingProcess(spec, this.config.worker.backend, checkpoint?.bytes ?? null, sink);
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
    const started_ = Date.now();
    try {
      const outcome = await process.outcome;
      await this.settle(jobId, stopReason, outcome, { spec, trigger, ownerId: job.ownerId, name: job.name, rollbacks: job.rollbacks });
      this.logger.log(`job ${jobId}: ${outcome.status} after ${((Date.now() - started_) / 1000).toFixed(1)} s`);
    } finally {
      clearInterval(poll);
      this.active.delete(jobId);
      await withRetry(() => this.usage.close(jobId), { deadlineMs: WRITE_DEADLINE_MS }).catch((error: Error) => this.logger.warn(`job ${jobId}: usage not closed: ${error.message}`));
    }
  }

  private sink(job: { id: string; ownerId: string; name: string }, totalSteps: number, cancelled: () => boolean, onWarnings: (w: CollapseWarning[]) => void): TrainingSink {
    const jobId = job.id;
    const retry = <T>(what: string, operation: () => Promise<T>) =>
      withRetry(operation, {
        deadlineMs: WRITE_DEADLINE_MS,
        abandon: cancelled,
        onRetry: (error, attempt) => this.logger.warn(`job ${jobId}: ${what} failed (attempt ${attempt}), retrying: ${error.message}`),
      });
    return {
      started: (info) =>
        retry('start', () =>
          Promise.all([
            this.jobs.update(jobId, { backend: info.backend }),
            this.jobs.addEvent(jobId, 'log', `training process started on ${info.backend} (${info.parameters} parameters) from step ${info.fromStep}`, info),
          ]),
        ).then(() => undefined),
      step: (step, metrics, trajectories) => retry(`step ${step}`, () => this.results.saveStep(jobId, step, totalSteps, metrics, trajectories)).then(() => undefined),
      warnings: async (step, warnings) => {
        const added = await retry(`warnings ${step}`, () => this.results.saveWarnings(jobId, warnings));
        if (added > 0) {
          for (const warning of warnings.filter((w) => w.severity !== 'info')) {
            await retry('webhook', () => this.webhooks.enqueue(job.ownerId, 'collapse.warning', { type: 'collapse.warning', timestamp: new Date().toISOString(), data: { jobId, jobName: job.name, ...warning } }));
          }
        }
        onWarnings(warnings);
      },
      checkpoint: (step, bytes, health) => retry(`checkpoint ${step}`, () => this.results.saveCheckpoint(jobId, step, bytes, this.config.checkpointsKept, health)).then(() => undefined),
      log: (message) => retry('log', () => this.jobs.addEvent(jobId, 'log', message)).then(() => undefined),
    };
  }

  /** Final state from why training stopped and how it ended. */
  private async settle(jobId: string, reason: StopReason | null, outcome: TrainingOutcome, context: SettleContext): Promise<void> {
    const finish = { finishedAt: new Date(), controlRequest: null };
    const write = (data: Parameters<JobRepository['transition']>[2], message: string, extra: Record<string, unknown> = {}) =>
      withRetry(() => this.jobs.transition(jobId, ['running', 'queued'], data, { message, data: { status: data.status ?? 'running', ...extra } as object }), { deadlineMs: WRITE_DEADLINE_MS });
    const notify = (status: string, detail: Record<string, unknown> = {}) =>
      this.webhooks.enqueue(context.ownerId, `job.${status}`, { type: `job.${status}`, timestamp: new Date().toISOString(), data: { jobId, jobName: context.name, ...detail } }).catch(() => 0);
    const cause = context.trigger ? `${context.trigger.detector} at step ${context.trigger.step}` : '';
    if (reason === 'rollback' && (await this.rollback(jobId, context))) return;
    if (reason === 'cancel') {
      await write({ status: 'cancelled', ...finish }, 'cancelled');
      await notify('cancelled');
    } else if (outcome.status === 'completed') {
      await write({ status: 'succeeded', progress: 1, ...finish }, `succeeded at step ${outcome.step}`);
      await notify('succeeded', { step: outcome.step });
    } else if (outcome.status === 'stopped' && (reason === 'pause' || reason === 'collapse-pause')) {
      const why = reason === 'collapse-pause' ? ` by collapse rule (${cause})` : '';
      await write({ status: 'paused', controlRequest: null, dispatchedAt: null }, `paused at step ${outcome.step}${why}`, { warning: context.trigger });
      await notify('paused', { step: outcome.step, warning: context.trigger });
    } else if (reason === 'collapse-stop' || reason === 'rollback') {
      const error = reason === 'rollback' ? `collapse (${cause}) and no rollback possible: no healthy checkpoint or rollbacks exhausted` : `stopped by collapse rule: ${cause}`;
      await write({ status: 'failed', error, ...finish }, error, { warning: context.trigger });
      await notify('failed', { error });
    } else if (outcome.status === 'stopped') {
      // Preempted or the worker is shutting down: back to the queue, resumes from the checkpoint.
      await write({ status: 'queued', controlRequest: null, dispatchedAt: null, workerId: null }, `requeued at step ${outcome.step} (${reason})`);
    } else {
      const error = outcome.status === 'failed' ? outcome.error : 'training process was killed';
      await write({ status: 'failed', error, ...finish }, `failed: ${error}`);
      await notify('failed', { error });
    }
  }

  /**
   * collapse.action = rollback: back to the newest healthy checkpoint before the warning, with
   * the spec's rollback overrides (lower learning rate, stronger filter), then requeued.
   * False when no rollback is possible (the caller stops the job).
   */
  private async rollback(jobId: string, context: SettleContext): Promise<boolean> {
    const { spec, trigger } = context;
    if (!trigger || context.rollbacks >= spec.collapse.rollback.maxRollbacks) return false;
    // Detectors lag the update that broke a policy, so the checkpoint written just before a
    // warning can already hold broken weights. A run that warns again within RELAPSE_STEPS of the
    // checkpoint it was rolled back to did not recover from there: go back further than that.
    const previous = context.rollbacks > 0 ? await this.jobs.lastRollbackTarget(jobId) : null;
    const relapsed = previous !== null && trigger.step - previous <= RELAPSE_STEPS;
    const target = await this.results.latestHealthyCheckpoint(jobId, relapsed ? previous - 1 : trigger.step);
    if (!target) return false;
    const next: JobSpec = structuredClone(spec);
    next.training.learningRate = spec.training.learningRate * spec.collapse.rollback.learningRateScale;
    if (spec.collapse.rollback.filterKeepFraction !== undefined) {
      next.algorithm.config.filter = 'std-top';
      next.algorithm.config.filterKeepFraction = spec.collapse.rollback.filterKeepFraction;
    }
    const message = `rolled back to healthy checkpoint at step ${target.step} after ${trigger.detector} at step ${trigger.step}; learning rate ${spec.training.learningRate} → ${next.training.learningRate}` +
      (spec.collapse.rollback.filterKeepFraction !== undefined ? `, filter keeps ${spec.collapse.rollback.filterKeepFraction}` : '');
    await this.results.rollBackTo(
      jobId,
      target.step,
      { status: 'queued', spec: next as unknown as object, rollbacks: context.rollbacks + 1, currentStep: target.step, dispatchedAt: null, workerId: null, controlRequest: null },
      { message, data: { action: 'rollback', toStep: target.step, warning: { ...trigger }, learningRate: next.training.learningRate, filterKeepFraction: next.algorithm.config.filterKeepFraction } },
    );
    this.logger.warn(`job ${jobId}: ${message}`);
    return true;
  }
}

interface SettleContext {
  spec: JobSpec;
  trigger: CollapseWarning | null;
  ownerId: string;
  name: string;
  rollbacks: number;
}

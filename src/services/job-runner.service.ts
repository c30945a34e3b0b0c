import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobRepository } from '../repositories/job.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { parseJobSpec } from '../training/spec/validate';
import { TrainingOutcome, TrainingProcess, TrainingSink } from '../worker/training-runner';
import { withRetry } from './retry';

/** How long a worker keeps retrying a write before it gives the job up (it resumes elsewhere). */
const WRITE_DEADLINE_MS = 5 * 60_000;

type StopReason = 'cancel' | 'pause' | 'preempt' | 'shutdown';

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
    if (job.controlRequest === 'cancel') {
      await this.settle(jobId, 'cancel', { status: 'killed' });
      return;
    }
    // The stored spec was validated at submission; validate again: the row is input too.
    const spec = parseJobSpec(job.spec);
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
    this.logger.log(`job ${jobId}: attempt ${attempt} on ${this.config.worker.name}${resumeNote}`);

    let stopReason: StopReason | null = null;
    const sink = this.sink(jobId, spec.training.steps, () => stopReason === 'cancel');
    const process = new TrainingProcess(spec, this.config.worker.backend, checkpoint?.bytes ?? null, sink);
    const stop = (reason: StopReason) => {
      if (stopReason === 'cancel') return;
      stopReason = reason;
      if (reason === 'cancel') process.kill();
      else process.stop();
    };
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
      await this.settle(jobId, stopReason, outcome);
      this.logger.log(`job ${jobId}: ${outcome.status} after ${((Date.now() - started_) / 1000).toFixed(1)} s`);
    } finally {
      clearInterval(poll);
      this.active.delete(jobId);
    }
  }

  private sink(jobId: string, totalSteps: number, cancelled: () => boolean): TrainingSink {
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
      checkpoint: (step, bytes) => retry(`checkpoint ${step}`, () => this.results.saveCheckpoint(jobId, step, bytes, this.config.checkpointsKept)).then(() => undefined),
      log: (message) => retry('log', () => this.jobs.addEvent(jobId, 'log', message)).then(() => undefined),
    };
  }

  /** Final state from why training stopped and how it ended. */
  private async settle(jobId: string, reason: StopReason | null, outcome: TrainingOutcome): Promise<void> {
    const finish = { finishedAt: new Date(), controlRequest: null };
    const write = (data: Parameters<JobRepository['transition']>[2], message: string) =>
      withRetry(() => this.jobs.transition(jobId, ['running', 'queued'], data, { message, data: { status: data.status ?? 'running' } }), { deadlineMs: WRITE_DEADLINE_MS });
    if (reason === 'cancel') {
      await write({ status: 'cancelled', ...finish }, 'cancelled');
    } else if (outcome.status === 'completed') {
      await write({ status: 'succeeded', progress: 1, ...finish }, `succeeded at step ${outcome.step}`);
    } else if (outcome.status === 'stopped' && reason === 'pause') {
      await write({ status: 'paused', controlRequest: null, dispatchedAt: null }, `paused at step ${outcome.step}`);
    } else if (outcome.status === 'stopped') {
      // Preempted or the worker is shutting down: back to the queue, resumes from the checkpoint.
      await write({ status: 'queued', controlRequest: null, dispatchedAt: null, workerId: null }, `requeued at step ${outcome.step} (${reason})`);
    } else {
      const error = outcome.status === 'failed' ? outcome.error : 'training process was killed';
      await write({ status: 'failed', error, ...finish }, `failed: ${error}`);
    }
  }
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { fork } from 'node:child_process';
import { extname, join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/config';
import { EvaluationRepository, EvaluationRow } from '../repositories/evaluation.repository';
import { JobRepository } from '../repositories/job.repository';
import type { EvaluationResult } from '../services/evaluation.service';
import { parseStoredJobSpec } from '../training/spec/validate';
import type { EvaluationAnswer, EvaluationTask } from './evaluation-protocol';

/** Sampling seed of every evaluation: the same request on the same checkpoint gives the same result. */
const EVALUATION_SEED = 0;

/**
 * Plays queued evaluations on this worker, one at a time beside its training slots: claims the
 * oldest (Postgres is the queue, EvaluationRepository), plays it in a child process
 * (evaluation-process.ts) and stores success, pass@k and a few transcripts, or why it failed.
 * An evaluation whose worker died is claimed again by the next worker that polls.
 */
@Injectable()
export class EvaluationRunnerService {
  private readonly logger = new Logger(EvaluationRunnerService.name);
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;

  constructor(
    private readonly evaluations: EvaluationRepository,
    private readonly jobs: JobRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.config.worker.controlPollMs);
  }

  /** Stops taking evaluations; one in progress is left to finish or to be claimed again. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.current) return;
    this.current = (async () => {
      const claimed = await this.evaluations.claim(this.config.worker.name, this.config.scheduling.workerStaleMs);
      if (claimed) await this.play(claimed);
    })()
      .catch((error: Error) => this.logger.warn(`evaluations: ${error.message}`))
      .finally(() => (this.current = null));
  }

  private async play(evaluation: EvaluationRow): Promise<void> {
    const worker = this.config.worker.name;
    const fail = (error: string) => this.evaluations.finish(evaluation.id, worker, { status: 'failed', error });
    const job = await this.jobs.findById(evaluation.jobId);
    const checkpoint = evaluation.checkpointId ? await this.evaluations.checkpointBytes(evaluation.checkpointId) : null;
    if (!job || !checkpoint?.bytes) {
      await fail(`the checkpoint at step ${evaluation.step} no longer exists (checkpoint retention deleted it)`);
      return;
    }
    const spec = parseStoredJobSpec(job.spec);
    this.logger.log(`evaluation ${evaluation.id}: job ${job.id} step ${evaluation.step}, ${evaluation.episodes} × ${evaluation.k} episodes`);
    const answer = await this.run({
      backend: this.config.worker.backend,
      checkpoint: checkpoint.bytes,
      settings: spec.rollout,
      request: { environment: evaluation.environment as EvaluationTask['request']['environment'], episodes: evaluation.episodes, k: evaluation.k, temperature: evaluation.temperature, seed: EVALUATION_SEED },
    });
    if (answer.type === 'failed') {
      await fail(answer.error);
      this.logger.warn(`evaluation ${evaluation.id} failed: ${answer.error}`);
      return;
    }
    const { result, durationMs } = answer;
    const kept: EvaluationResult = { meanReturn: result.meanReturn, formatValid: result.formatValid, samples: result.samples, durationMs };
    await this.evaluations.finish(evaluation.id, worker, { status: 'succeeded', success: result.success, passAtK: result.passAtK, result: { ...kept } });
    this.logger.log(`evaluation ${evaluation.id}: success ${result.success.toFixed(3)}, pass@${result.k} ${result.passAtK.toFixed(3)} in ${(durationMs / 1000).toFixed(1)} s`);
  }

  private run(task: EvaluationTask): Promise<EvaluationAnswer> {
    const entry = join(__dirname, `evaluation-process${extname(__filename)}`);
    const execArgv = extname(__filename) === '.ts' ? ['-r', '@swc-node/register'] : [];
    const child = fork(entry, [], { serialization: 'advanced', execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve) => {
      let answer: EvaluationAnswer | null = null;
      child.on('message', (message: EvaluationAnswer) => (answer = message));
      child.on('error', (error) => (answer ??= { type: 'failed', error: `evaluation process: ${error.message}` }));
      child.on('exit', (code, signal) => resolve(answer ?? { type: 'failed', error: `evaluation process exited (${signal ?? `code ${code}`})` }));
      child.send(task);
    });
  }
}

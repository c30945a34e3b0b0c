import { Inject, Injectable, Logger } from '@nestjs/common';
import { extname, join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/config';
import { EnvironmentServerRepository, serverAddress, storedDefinition } from '../repositories/environment-server.repository';
import { EvaluationRepository, EvaluationRow } from '../repositories/evaluation.repository';
import { JobRepository } from '../repositories/job.repository';
import { ProcessRepository } from '../repositories/process.repository';
import type { EvaluationResult } from '../services/evaluation.service';
import { parseStoredJobSpec } from '../training/spec/validate';
import type { EvaluationAnswer, EvaluationTask } from './evaluation-protocol';

/** Sampling seed of every evaluation: the same request on the same checkpoint gives the same result. */
const EVALUATION_SEED = 0;

/** Past its timeout by this much, an evaluation still `running` is failed by whichever worker polls (its own worker is stuck). */
const EXPIRY_GRACE_MS = 60_000;

/**
 * Plays queued evaluations on this worker, one at a time beside its training slots: claims the
 * oldest (Postgres is the queue, EvaluationRepository), plays it in a child process
 * (evaluation-process.ts) and stores success, pass@k and a few transcripts, or why it failed.
 * An evaluation whose worker died is claimed again by the next worker that polls; one whose
 * worker restarted under the same name goes back to the queue at its start (`reclaim`). The
 * child has STARLAB_EVALUATION_TIMEOUT_MS to answer: then it is killed and the evaluation fails,
 * and one left `running` past that (its worker stuck) is failed by any worker that polls.
 */
@Injectable()
export class EvaluationRunnerService {
  private readonly logger = new Logger(EvaluationRunnerService.name);
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;

  constructor(
    private readonly evaluations: EvaluationRepository,
    private readonly jobs: JobRepository,
    private readonly processes: ProcessRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly environments: EnvironmentServerRepository,
  ) {}

  /** At the worker's start, before its first heartbeat: evaluations an earlier process of this name was playing go back to the queue. */
  async reclaim(): Promise<number> {
    const reclaimed = await this.evaluations.reclaim(this.config.worker.name);
    if (reclaimed > 0) this.logger.warn(`requeued ${reclaimed} evaluation(s) an earlier process of ${this.config.worker.name} was playing`);
    return reclaimed;
  }

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
      const timeoutMs = this.config.worker.evaluationTimeoutMs;
      await this.evaluations.expire(timeoutMs + EXPIRY_GRACE_MS, `timed out: still running ${(timeoutMs + EXPIRY_GRACE_MS) / 1000} s after it was claimed (its worker stopped answering for it)`);
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
    // A registered environment (the job's, or the one the evaluation names) is played on its server,
    // which the child connects to itself; one deleted since is a clear failure.
    const environment = evaluation.environment as EvaluationTask['request']['environment'];
    const [trainedOn, playedOn] = await Promise.all([this.environments.registrationFor(job.spec), this.environments.registrationOrGone({ environment })]);
    if (playedOn === 'gone') {
      await fail(`environment '${environment.id}' is not registered any more (an admin deleted it)`);
      return;
    }
    const spec = parseStoredJobSpec(job.spec, trainedOn ? storedDefinition(trainedOn) : undefined);
    this.logger.log(`evaluation ${evaluation.id}: job ${job.id} step ${evaluation.step}, ${evaluation.episodes} × ${evaluation.k} episodes`);
    const answer = await this.run({
      backend: this.config.worker.backend,
      checkpoint: checkpoint.bytes,
      settings: spec.rollout,
      request: { environment, episodes: evaluation.episodes, k: evaluation.k, temperature: evaluation.temperature, seed: EVALUATION_SEED },
      served: playedOn ? { id: playedOn.id, address: serverAddress(playedOn), digest: playedOn.digest } : null,
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

  /** Plays `task` in a child process, killed when it has not answered within STARLAB_EVALUATION_TIMEOUT_MS. */
  private run(task: EvaluationTask): Promise<EvaluationAnswer> {
    const child = this.processes.start(join(__dirname, `evaluation-process${extname(__filename)}`));
    const timeoutMs = this.config.worker.evaluationTimeoutMs;
    return new Promise((resolve) => {
      let answer: EvaluationAnswer | null = null;
      const timer = setTimeout(() => {
        answer ??= { type: 'failed', error: `timed out after ${timeoutMs / 1000} s (STARLAB_EVALUATION_TIMEOUT_MS)` };
        child.kill('SIGKILL');
      }, timeoutMs);
      child.on('message', (message: EvaluationAnswer) => (answer ??= message));
      child.on('error', (error) => (answer ??= { type: 'failed', error: `evaluation process: ${error.message}` }));
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(answer ?? { type: 'failed', error: `evaluation process exited (${signal ?? `code ${code}`})` });
      });
      if (child.connected) child.send(task);
    });
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { CreateEvaluationBody, EvaluationListView, EvaluationStatus, EvaluationView, MAX_EVALUATION_EPISODES } from '../contracts/checkpoint-actions.dto';
import { EnvironmentServerRepository } from '../repositories/environment-server.repository';
import { EvaluationRepository, EvaluationRow } from '../repositories/evaluation.repository';
import { ResultsRepository } from '../repositories/results.repository';
import { playabilityProblems, shapeOfJob } from '../training/checkpoint-evaluation';
import { getEnvDefinition, isBuiltInEnvironment } from '../training/envs/registry';
import { checkAgainst } from '../training/spec/errors';
import { parseStoredJobSpec } from '../training/spec/validate';
import type { Principal } from './auth.service';
import { Conflict, NotFound, ValidationFailed } from './errors';
import { isUuid, JobService } from './job.service';

/** What a finished evaluation keeps besides success and pass@k (the `result` column). */
export interface EvaluationResult {
  meanReturn: number;
  formatValid: number;
  samples: string[];
  durationMs: number;
}

/**
 * Evaluations of a job's checkpoints on environment configs (the API side): checked here, at
 * once, so a config the checkpoint cannot read is a 400 that says why; then stored as queued
 * for a worker to play (src/worker/evaluation-runner.service.ts).
 */
@Injectable()
export class EvaluationService {
  private readonly logger = new Logger(EvaluationService.name);

  constructor(
    private readonly jobService: JobService,
    private readonly evaluations: EvaluationRepository,
    private readonly results: ResultsRepository,
    private readonly environments: EnvironmentServerRepository,
  ) {}

  async request(principal: Principal, jobId: string, body: CreateEvaluationBody): Promise<EvaluationView> {
    const job = await this.jobService.readable(principal, jobId);
    const trainedOn = await this.environments.definitionFor(job.spec);
    const spec = parseStoredJobSpec(job.spec, trainedOn);
    const episodes = body.episodes ?? 256;
    const k = body.k ?? 4;
    if (episodes * k > MAX_EVALUATION_EPISODES) throw new ValidationFailed([{ field: 'body.k', message: `episodes × k must be <= ${MAX_EVALUATION_EPISODES} (${episodes} × ${k})` }]);
    const id = body.environment?.id ?? spec.environment.id;
    const given = body.environment?.config ?? {};
    const config = id === spec.environment.id ? { ...spec.environment.config, ...given } : given;
    // A registered environment is checked with its served definition (from its stored manifest).
    const playedOn = id === spec.environment.id ? trainedOn : await this.environments.definitionFor({ environment: { id } });
    if (!playedOn && !isBuiltInEnvironment(id)) throw new ValidationFailed([{ field: 'body.environment.id', message: `"${id}" is neither a built-in nor a registered environment (GET /v1/environments)` }]);
    const problems = playabilityProblems(shapeOfJob(spec, trainedOn), spec.rollout, { id, config }, 'body', playedOn);
    if (problems.length > 0) throw new ValidationFailed(problems);
    const checkpoint = body.checkpointId === undefined ? await this.results.latestCheckpoint(jobId) : await this.results.checkpointOf(jobId, body.checkpointId);
    if (!checkpoint) {
      if (body.checkpointId !== undefined) throw new NotFound('checkpoint', `${body.checkpointId} of job ${jobId}`);
      throw new Conflict(`job ${jobId} has no checkpoint yet: it writes its first after the warm-up`);
    }
    const resolved = checkAgainst<Record<string, unknown>>((playedOn ?? getEnvDefinition(id)).configSchema, config, 'body.environment.config').value;
    const row = await this.evaluations.create({ jobId, checkpointId: checkpoint.id, step: checkpoint.step, environment: { id, config: resolved }, episodes, k, temperature: body.temperature ?? spec.training.evalTemperature });
    this.logger.log(`evaluation ${row.id} of job ${jobId} step ${checkpoint.step} on ${id} ${JSON.stringify(resolved)} requested by ${principal.name}`);
    return toEvaluationView(row);
  }

  async get(principal: Principal, jobId: string, evaluationId: string): Promise<EvaluationView> {
    await this.jobService.readable(principal, jobId);
    const row = isUuid(evaluationId) ? await this.evaluations.findForJob(jobId, evaluationId) : null;
    if (!row) throw new NotFound('evaluation', evaluationId);
    return toEvaluationView(row);
  }

  async list(principal: Principal, jobId: string): Promise<EvaluationListView> {
    await this.jobService.readable(principal, jobId);
    return { data: (await this.evaluations.listForJob(jobId, 100)).map(toEvaluationView) };
  }
}

export function toEvaluationView(row: EvaluationRow): EvaluationView {
  const result = (row.result as Partial<EvaluationResult> | null) ?? {};
  return {
    id: row.id,
    jobId: row.jobId,
    checkpointId: row.checkpointId,
    step: row.step,
    status: row.status as EvaluationStatus,
    environment: row.environment as EvaluationView['environment'],
    episodes: row.episodes,
    k: row.k,
    temperature: row.temperature,
    success: row.success,
    passAtK: row.passAtK,
    meanReturn: result.meanReturn ?? null,
    formatValid: result.formatValid ?? null,
    samples: result.samples ?? [],
    error: row.error,
    worker: row.workerId,
    durationMs: result.durationMs ?? null,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

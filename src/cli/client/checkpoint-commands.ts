import type { EvaluationView } from '../../contracts/checkpoint-actions.dto';
import type { ApiClient } from './api-client';
import { Io, JobView, UsageError } from './jobs';

interface CheckpointRow {
  id: string;
  step: number;
  health: string;
}

/** The id of the job's checkpoint at `step`, or undefined (the API then takes its default) when no step is given. */
export async function checkpointAt(client: ApiClient, jobId: string, step: number | undefined): Promise<string | undefined> {
  if (step === undefined) return undefined;
  const { data } = await client.get<{ data: CheckpointRow[] }>(`/v1/jobs/${jobId}/checkpoints`);
  const found = data.find((c) => c.step === step);
  if (!found) throw new UsageError(data.length === 0 ? `job ${jobId} has no checkpoints` : `job ${jobId} has no checkpoint at step ${step}; it has steps ${data.map((c) => c.step).join(', ')}`);
  return found.id;
}

/**
 * Spec overrides from `--set path=value` (repeatable; the value read as JSON when it parses,
 * else as text) merged over `--overrides JSON`: `--set training.learningRate=0.0005`.
 */
export function overridesOf(sets: readonly string[], json: string | undefined): Record<string, unknown> {
  let overrides: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      overrides = JSON.parse(json) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--overrides is not JSON: ${(error as Error).message}`);
    }
    if (!overrides || typeof overrides !== 'object' || Array.isArray(overrides)) throw new UsageError('--overrides must be a JSON object');
  }
  for (const assignment of sets) {
    const at = assignment.indexOf('=');
    const path = assignment.slice(0, at);
    if (at < 1 || !/^[A-Za-z][\w]*(\.[A-Za-z][\w]*)*$/.test(path)) throw new UsageError(`--set ${assignment}: expected path=value, e.g. training.learningRate=0.0005`);
    const text = assignment.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      /* a plain word: text */
    }
    const parts = path.split('.');
    let node = overrides;
    for (const part of parts.slice(0, -1)) node = (node[part] = node[part] && typeof node[part] === 'object' ? node[part] : {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return overrides;
}

/** `starlab fork <job>`: a new job from a checkpoint (the latest, or `--step`), with overrides. */
export async function fork(client: ApiClient, io: Io, jobId: string, options: { step?: number; name?: string; overrides: Record<string, unknown>; quiet: boolean; json: boolean }): Promise<JobView> {
  const checkpointId = await checkpointAt(client, jobId, options.step);
  const job = await client.post<JobView & { forkedFrom: { jobId: string; step: number } }>(`/v1/jobs/${jobId}/fork`, { ...(checkpointId ? { checkpointId } : {}), ...(options.name ? { name: options.name } : {}), overrides: options.overrides });
  if (options.quiet) io.out(job.id);
  else if (options.json) io.out(JSON.stringify(job, null, 2));
  else io.out(`forked job ${jobId} at step ${job.forkedFrom.step} as ${job.name} ${job.id} (${job.status}; it trains steps ${job.forkedFrom.step + 1}–${job.totalSteps})`);
  return job;
}

/** `starlab rollback <job>`: back to a checkpoint (the newest healthy one, or `--step`), queued to train on from there. */
export async function rollback(client: ApiClient, io: Io, jobId: string, options: { step?: number; learningRate?: number; json: boolean }): Promise<void> {
  const checkpointId = await checkpointAt(client, jobId, options.step);
  const job = await client.post<JobView>(`/v1/jobs/${jobId}/rollback`, { ...(checkpointId ? { checkpointId } : {}), ...(options.learningRate !== undefined ? { learningRate: options.learningRate } : {}) });
  if (options.json) return io.out(JSON.stringify(job, null, 2));
  io.out(`job ${job.id} rolled back to step ${job.currentStep}: ${job.status}, to train steps ${job.currentStep + 1}–${job.totalSteps}`);
}

export interface RemoteEvaluationOptions {
  step?: number;
  env?: string;
  envConfig?: string;
  episodes?: number;
  k?: number;
  temperature?: number;
  wait: boolean;
  json: boolean;
}

/**
 * `starlab evaluate <job>`: a worker plays a checkpoint of the job (the latest, or `--step`) on its
 * held-out evaluation seeds, optionally on another environment config; waits for the result
 * unless `--no-wait`.
 */
export async function evaluateRemotely(client: ApiClient, io: Io, jobId: string, options: RemoteEvaluationOptions, signal: AbortSignal): Promise<number> {
  let config: Record<string, unknown> | undefined;
  if (options.envConfig !== undefined) {
    try {
      config = JSON.parse(options.envConfig) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--env-config is not JSON: ${(error as Error).message}`);
    }
  }
  const checkpointId = await checkpointAt(client, jobId, options.step);
  const environment = options.env !== undefined || config !== undefined ? { ...(options.env ? { id: options.env } : {}), ...(config ? { config } : {}) } : undefined;
  const body = { ...(checkpointId ? { checkpointId } : {}), ...(environment ? { environment } : {}), ...(options.episodes ? { episodes: options.episodes } : {}), ...(options.k ? { k: options.k } : {}), ...(options.temperature !== undefined ? { temperature: options.temperature } : {}) };
  let evaluation = await client.post<EvaluationView>(`/v1/jobs/${jobId}/evaluations`, body);
  if (!options.wait) {
    io.out(options.json ? JSON.stringify(evaluation, null, 2) : `evaluation ${evaluation.id} of job ${jobId} at step ${evaluation.step}: ${evaluation.status} (starlab evaluate ${jobId} --step ${evaluation.step} waits for it; GET /v1/jobs/${jobId}/evaluations/${evaluation.id})`);
    return 0;
  }
  io.err(`evaluating step ${evaluation.step} of job ${jobId} on a worker: ${evaluation.episodes} seeds × ${evaluation.k}…`);
  let delayMs = 250;
  while (['queued', 'running'].includes(evaluation.status) && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, 2000);
    evaluation = await client.get<EvaluationView>(`/v1/jobs/${jobId}/evaluations/${evaluation.id}`);
  }
  if (options.json) io.out(JSON.stringify(evaluation, null, 2));
  else if (evaluation.status === 'succeeded') {
    const percent = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);
    io.out(
      [
        `checkpoint step ${evaluation.step} on ${evaluation.environment.id} ${JSON.stringify(evaluation.environment.config)}: ${evaluation.episodes} seeds × ${evaluation.k}, temperature ${evaluation.temperature} (${evaluation.worker ?? 'worker'}, ${((evaluation.durationMs ?? 0) / 1000).toFixed(1)} s)`,
        `success ${percent(evaluation.success)}  pass@${evaluation.k} ${percent(evaluation.passAtK)}  well-formed turns ${percent(evaluation.formatValid)}  mean return ${evaluation.meanReturn?.toFixed(3) ?? '–'}`,
      ].join('\n'),
    );
  } else io.err(`evaluation ${evaluation.id} ${evaluation.status}${evaluation.error ? `: ${evaluation.error}` : ''}`);
  return evaluation.status === 'succeeded' ? 0 : 1;
}

import { readFileSync } from 'node:fs';
import { initBackend } from '../../training/backend';
import { CheckpointShape, evaluateCheckpoint, playabilityProblems, PlaySettings, shapeOfCheckpoint } from '../../training/checkpoint-evaluation';
import { listEnvironments } from '../../training/envs/registry';
import { HISTORY_TOKENS } from '../../training/policy/tokenizer';
import { parseJobSpec, parseStoredJobSpec } from '../../training/spec/validate';
import { Io, readSpec, UsageError } from './jobs';

export interface LocalEvaluationOptions {
  checkpoint: string;
  env?: string;
  envConfig?: string;
  /** A job spec, or a job as `starlab show --json` prints it (its `spec`). */
  spec?: string;
  episodes: number;
  k: number;
  temperature: number;
  json: boolean;
}

/** Cannot be played: the reasons, one a line. */
export class NotPlayable extends Error {}

/**
 * `starlab evaluate`: plays a downloaded checkpoint here, without a service, as the service's
 * evaluations do (the held-out evaluation seeds, k samples each): success and pass@k. The turns
 * are played with the job's rollout settings from --spec, else with the environment's defaults
 * (and the history the checkpoint's vocabulary was trained with).
 */
export async function evaluateLocally(io: Io, options: LocalEvaluationOptions): Promise<void> {
  let bytes: Uint8Array;
  let shape: CheckpointShape;
  try {
    bytes = new Uint8Array(readFileSync(options.checkpoint));
    shape = shapeOfCheckpoint(bytes);
  } catch (error) {
    throw new UsageError(`${options.checkpoint} is not a StarLab checkpoint: ${(error as Error).message}`);
  }
  const spec = options.spec ? specOf(readSpec(options.spec)) : undefined;
  const env = options.env ?? spec?.environment.id ?? soleEnvironmentOf(shape);
  const given = options.envConfig === undefined ? {} : jsonObject(options.envConfig, '--env-config');
  const config = spec && env === spec.environment.id ? { ...spec.environment.config, ...given } : given;
  const settings: PlaySettings = spec?.rollout ?? defaultSettings(env, shape);
  const problems = playabilityProblems(shape, settings, { id: env, config });
  if (problems.length > 0) throw new NotPlayable(problems.map((p) => `${p.field}: ${p.message}`).join('\n'));
  const backend = await initBackend('auto', () => undefined);
  const started = Date.now();
  const result = await evaluateCheckpoint(bytes, settings, { environment: { id: env, config }, episodes: options.episodes, k: options.k, temperature: options.temperature, seed: 0 });
  if (options.json) {
    io.out(JSON.stringify({ environment: { id: env, config }, backend, durationMs: Date.now() - started, ...result }, null, 2));
    return;
  }
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  io.out(`checkpoint step ${result.step} on ${env} ${JSON.stringify(config)}: ${options.episodes} seeds × ${options.k}, temperature ${options.temperature} (${backend}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  io.out(`success ${pct(result.success)}  pass@${result.k} ${pct(result.passAtK)}  format ${pct(result.formatValid)}  return ${result.meanReturn.toFixed(3)}`);
  if (result.samples[0]) io.out(`\nfirst episode:\n${result.samples[0]}`);
}

function specOf(raw: unknown) {
  const stored = (raw as { spec?: unknown })?.spec ?? raw;
  try {
    return parseStoredJobSpec(stored);
  } catch (error) {
    throw new UsageError(`--spec: ${(error as Error).message}`);
  }
}

/** The one environment whose symbols and actions the vocabulary holds (else --env is needed). */
function soleEnvironmentOf(shape: CheckpointShape): string {
  const tokens = new Set(shape.tokens);
  const fits = listEnvironments().filter((d) => [...d.vocabulary(d.defaults), ...d.actionNames].every((t) => tokens.has(t)));
  if (fits.length !== 1) throw new UsageError(`name the environment with --env (${fits.length === 0 ? 'none matches the checkpoint' : `it could be ${fits.map((d) => d.id).join(' or ')}`})`);
  return fits[0].id;
}

/** The environment's default rollout settings, in the history the checkpoint was trained with. */
function defaultSettings(env: string, shape: CheckpointShape): PlaySettings {
  const historyFormat = shape.tokens.includes(HISTORY_TOKENS.reward) ? 'ragen' : 'sign';
  return parseJobSpec({ environment: { id: env }, algorithm: { id: 'starpo-s' }, model: { config: { contextLength: shape.contextLength } }, rollout: { historyFormat } }).rollout;
}

function jsonObject(text: string, option: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${option} is not JSON: ${text}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${option} must be a JSON object, e.g. '{"slippery": true}'`);
  return value as Record<string, unknown>;
}

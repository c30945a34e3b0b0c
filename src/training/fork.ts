import { usesCritic } from './algorithms/presets';
import { playabilityProblems, shapeOfJob } from './checkpoint-evaluation';
import { FieldError, SpecValidationError } from './spec/errors';
import { JobSpec, parseJobSpec } from './spec/validate';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `overrides` over `base`: objects merge key by key, anything else (numbers, arrays) replaces. */
export function mergeOverrides(base: unknown, overrides: unknown): unknown {
  if (!isObject(base) || !isObject(overrides)) return overrides === undefined ? structuredClone(base) : structuredClone(overrides);
  const merged: Json = structuredClone(base);
  for (const [key, value] of Object.entries(overrides)) merged[key] = mergeOverrides(base[key], value);
  return merged;
}

/**
 * The spec of a job that continues `source` from its checkpoint at `step` with `overrides` (a
 * lower learning rate, more steps, another filter, labels…), resolved and checked like a
 * submission. Throws SpecValidationError with fields under `prefix` for overrides that are not
 * valid job spec values, and for those the checkpoint cannot continue with: a different model
 * shape or vocabulary (model.config, environment.id, rollout.historyFormat), a network the
 * checkpoint has no weights for (a critic, a KL reference), an environment config whose
 * observations it cannot read, or no steps left to train (training.steps ≤ step).
 */
export function forkSpec(source: JobSpec, step: number, overrides: Json, name: string, prefix: string): JobSpec {
  const at = (field: string) => `${prefix}.${field}`;
  if (overrides.specVersion !== undefined && overrides.specVersion !== source.specVersion) {
    throw new SpecValidationError([{ field: at('specVersion'), message: `a fork runs as its source did (version ${source.specVersion})` }]);
  }
  const environmentId = isObject(overrides.environment) ? overrides.environment.id : undefined;
  if (environmentId !== undefined && environmentId !== source.environment.id) {
    throw new SpecValidationError([{ field: at('environment.id'), message: `would change the model's vocabulary: the checkpoint was trained on ${source.environment.id}` }]);
  }
  let fork: JobSpec;
  try {
    // Another preset starts from its own values, not from the source's resolved ones.
    const algorithm = isObject(overrides.algorithm) && overrides.algorithm.id !== undefined && overrides.algorithm.id !== source.algorithm.id ? { id: overrides.algorithm.id, config: {} } : source.algorithm;
    fork = parseJobSpec(mergeOverrides({ ...source, name, algorithm }, overrides));
  } catch (error) {
    if (!(error instanceof SpecValidationError)) throw error;
    throw new SpecValidationError(error.errors.map((e) => ({ field: at(e.field), message: e.message })));
  }
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field: at(field), message });
  for (const [key, value] of Object.entries(source.model.config) as [keyof JobSpec['model']['config'], unknown][]) {
    if (fork.model.config[key] !== value) problem(`model.config.${key}`, `would change the model's shape: the checkpoint has ${key} ${JSON.stringify(value)}`);
  }
  if (fork.rollout.historyFormat !== source.rollout.historyFormat) problem('rollout.historyFormat', `would change the model's vocabulary: the checkpoint was trained with the ${source.rollout.historyFormat} history`);
  else problems.push(...playabilityProblems(shapeOfJob(source), fork.rollout, fork.environment, prefix));
  if (usesCritic(fork.algorithm.config) && !usesCritic(source.algorithm.config)) problem('algorithm.config.advantage', 'would add a critic (gae) the checkpoint has no weights for');
  if (fork.algorithm.config.klCoef > 0 && source.algorithm.config.klCoef === 0) problem('algorithm.config.klCoef', 'would add a KL reference the checkpoint has no weights for');
  if (fork.training.steps <= step) problems.push({ field: at('training.steps'), message: `must be > ${step}, the checkpoint's step (the fork trains steps ${step + 1}…training.steps)` });
  if (problems.length > 0) throw new SpecValidationError(problems);
  return fork;
}

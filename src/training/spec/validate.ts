import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ALGORITHM_PRESETS, AlgorithmConfig, AlgorithmConfigSchema, AlgorithmId } from '../algorithms/presets';
import { InvalidEnvConfigError } from '../envs/common';
import type { Curriculum } from '../curriculum';
import { ENVIRONMENTS } from '../envs/registry';
import type { EnvDefinition } from '../envs/types';
import { FieldError, SpecValidationError, checkAgainst } from './errors';
import {
  CollapseConfig,
  JobSpecInput,
  JobSpecSchema,
  MAX_EPISODES_PER_STEP,
  ModelConfig,
  RolloutConfig,
  SpecVersion,
  TrainingConfig,
} from './job-spec';
import { RECIPES, Recipe, SERVED_RECIPES, recipeFor } from './recipes';

export type WarmupKind = 'none' | 'format' | 'demonstrations';

/** A job spec with every default filled in and every value checked: what the trainer runs. */
export interface JobSpec {
  specVersion: SpecVersion;
  name: string;
  environment: { id: string; config: Record<string, unknown> };
  algorithm: { id: AlgorithmId; config: AlgorithmConfig };
  model: { id: 'transformer'; config: ModelConfig };
  rollout: RolloutConfig;
  training: TrainingConfig & { warmup: { kind: WarmupKind } };
  collapse: CollapseConfig;
  priority: number;
  device: 'any' | 'gpu' | 'cpu';
  labels: Record<string, string>;
}

/** Room the context must leave beyond one response: the observation of the current turn. */
const MIN_PROMPT_TOKENS = 16;
const MAX_CONTEXT_LENGTH = 512;
/** The schema's lower bound on model.config.contextLength: a derived window below it would not re-validate when the worker reads the stored spec. */
const MIN_CONTEXT_LENGTH = 32;
/** Longest number the history writes for a reward ("-10.25"). */
const REWARD_TOKENS_MAX = 6;
const PartialAlgorithmConfig = Type.Partial(AlgorithmConfigSchema, { additionalProperties: false });

type RawSpec = Record<string, unknown>;

/**
 * Validates a raw job definition (docs/training.md, "The job spec") and resolves it: the environment's rollout
 * budgets and the recipe for its warm-up kind under the job's own values, schema defaults, the
 * environment's config defaults, the algorithm preset overlaid by `algorithm.config`, and a
 * context window that holds a whole episode. Throws SpecValidationError listing every bad field
 * with its bound.
 */
export function parseJobSpec(raw: unknown, served?: EnvDefinition): JobSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SpecValidationError([{ field: '(body)', message: 'must be a JSON object' }]);
  }
  const envDefinition = definitionOf((raw as RawSpec).environment, served);
  const top = checkAgainst<JobSpecInput>(JobSpecSchema, withDefaultsUnder(raw as RawSpec, envDefinition), '');
  // The schema lists the built-in ids; a served environment's id is known from its registration.
  const errors: FieldError[] = top.errors.filter((e) => !(served && envDefinition === served && e.field === 'environment.id'));
  const input = top.value;
  if (errors.some((e) => e.field === 'environment' || e.field === 'algorithm' || e.field === 'environment.id')) throw new SpecValidationError(errors);

  const env = checkAgainst<Record<string, unknown>>(envDefinition!.configSchema, input.environment.config, 'environment.config');
  errors.push(...env.errors);
  if (env.errors.length === 0) errors.push(...envConfigErrors(envDefinition!, env.value));
  const overrides = checkAgainst<Partial<AlgorithmConfig>>(PartialAlgorithmConfig, input.algorithm.config, 'algorithm.config');
  errors.push(...overrides.errors);
  if (input.specVersion === 2 && overrides.value.miniBatches !== undefined && overrides.value.miniBatchSize !== undefined) {
    errors.push({ field: 'algorithm.config.miniBatches', message: 'give miniBatchSize or miniBatches, not both' });
  }
  if (errors.length > 0) throw new SpecValidationError(errors);

  const algorithmId = input.algorithm.id as AlgorithmId;
  const rollout = input.rollout as RolloutConfig;
  const modelConfig = input.model!.config as ModelConfig;
  modelConfig.contextLength ??= episodeContextLength(envDefinition!, env.value, rollout);
  const spec: JobSpec = {
    specVersion: input.specVersion as SpecVersion,
    name: input.name ?? `${input.environment.id}-${algorithmId}`,
    environment: { id: input.environment.id, config: env.value },
    algorithm: { id: algorithmId, config: { ...ALGORITHM_PRESETS[algorithmId].config, ...overrides.value } },
    model: { id: 'transformer', config: modelConfig },
    rollout,
    training: input.training as JobSpec['training'],
    collapse: input.collapse as CollapseConfig,
    priority: input.priority!,
    device: input.device as JobSpec['device'],
    labels: input.labels as Record<string, string>,
  };
  const hasExpert = Boolean(envDefinition!.expert);
  if (spec.training.warmup.kind === ('auto' as string)) spec.training.warmup.kind = hasExpert ? 'demonstrations' : 'format';
  errors.push(...crossFieldErrors(spec, hasExpert), ...curriculumErrors(envDefinition!, spec));
  if (envDefinition!.served && !envDefinition!.served.fork && spec.algorithm.config.rollout !== 'independent') {
    errors.push({ field: 'algorithm.id', message: `${algorithmId} branches episodes, and the server of ${spec.environment.id} does not copy them (POST /fork); choose a preset that does not branch` });
  }
  if (errors.length > 0) throw new SpecValidationError(errors);
  return spec;
}

/**
 * A job's spec as stored: the resolved spec it was submitted as. Specs stored before
 * `specVersion` existed are version 1 and run as they did then.
 */
export function parseStoredJobSpec(stored: unknown, served?: EnvDefinition): JobSpec {
  const isObject = typeof stored === 'object' && stored !== null && !Array.isArray(stored);
  return parseJobSpec(isObject && (stored as RawSpec).specVersion === undefined ? { ...(stored as RawSpec), specVersion: 1 } : stored, served);
}

function definitionOf(environment: unknown, served?: EnvDefinition): EnvDefinition | undefined {
  const id = (environment as { id?: unknown } | undefined)?.id;
  if (served && id === served.id) return served;
  return typeof id === 'string' && Object.prototype.hasOwnProperty.call(ENVIRONMENTS, id) ? ENVIRONMENTS[id] : undefined;
}

const isPlainObject = (value: unknown): value is RawSpec => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `base` under `over`, when both are objects; otherwise `over` as given (the schema reports it). */
function under(base: RawSpec | undefined, over: unknown): unknown {
  if (!base || Object.keys(base).length === 0) return over;
  if (over === undefined) return { ...base };
  return isPlainObject(over) ? { ...base, ...over } : over;
}

/**
 * The job's own values over the defaults that depend on its environment: the environment's
 * rollout budgets and, for version 2, the recipe of its warm-up kind; for version 1, the values
 * of fields that version 2 added, as they were before it.
 */
function withDefaultsUnder(raw: RawSpec, definition: EnvDefinition | undefined): RawSpec {
  if (!definition) return raw;
  const version = raw.specVersion ?? 2;
  const training = isPlainObject(raw.training) ? raw.training : undefined;
  const warmup = isPlainObject(training?.warmup) ? (training!.warmup as RawSpec) : undefined;
  const kind = warmup?.kind === undefined || warmup.kind === 'auto' ? (definition.expert ? 'demonstrations' : 'format') : warmup.kind;
  const recipes = definition.served ? SERVED_RECIPES : RECIPES[definition.id];
  const envConfig = Value.Default(definition.configSchema, structuredClone(isPlainObject(raw.environment) && isPlainObject(raw.environment.config) ? raw.environment.config : {})) as RawSpec;
  const recipe: Recipe = version === 2 ? recipeFor(recipes?.[kind as 'format' | 'demonstrations'] ?? {}, envConfig) : {};
  const legacy: Partial<Record<'environment' | 'algorithm' | 'model' | 'rollout', RawSpec>> = version === 1 ? legacyFields(definition.id) : {};
  const model = isPlainObject(raw.model) ? raw.model : raw.model === undefined ? {} : undefined;
  const algorithm = raw.algorithm;
  return {
    ...raw,
    environment: isPlainObject(raw.environment) ? { ...raw.environment, config: under(legacy.environment, raw.environment.config) } : raw.environment,
    algorithm: isPlainObject(algorithm) ? { ...algorithm, config: under({ ...legacy.algorithm, ...recipe.algorithm }, algorithm.config) } : algorithm,
    model: model ? { ...model, config: under({ ...legacy.model, ...recipe.model }, model.config) } : raw.model,
    rollout: under({ ...definition.rolloutDefaults, ...legacy.rollout, ...recipe.rollout }, raw.rollout),
    training:
      training || raw.training === undefined
        ? { ...recipe.training, ...training, warmup: under(recipe.training?.warmup as RawSpec | undefined, training?.warmup) }
        : raw.training,
  };
}

/** What fields added in version 2 meant before it, for a version-1 spec that does not name them. */
function legacyFields(envId: string): Record<'environment' | 'algorithm' | 'model' | 'rollout', RawSpec> {
  return {
    environment: envId === 'sokoban' ? { difficulty: 'hard' } : {},
    algorithm: { weightDecay: 0, miniBatches: 1 },
    model: { contextLength: 128 },
    rollout: { historyFormat: 'sign' },
  };
}

/**
 * Positions for a whole episode under the rollout budget: per turn the observation with its
 * markers, the actions left, the longest response and the reward, capped at 512.
 */
export function episodeContextLength(definition: EnvDefinition, envConfig: Record<string, unknown>, rollout: RolloutConfig): number {
  const actionsLeftDigits = String(rollout.maxActionsPerEpisode).length;
  const perTurn = 1 + definition.observationTokens(envConfig) + 1 + actionsLeftDigits + 1 + rollout.maxTokensPerTurn + 1 + REWARD_TOKENS_MAX;
  return Math.max(MIN_CONTEXT_LENGTH, Math.min(MAX_CONTEXT_LENGTH, 1 + rollout.maxTurns * perTurn));
}

/**
 * Constraints between an environment's config fields that its schema cannot state (lookup-qa:
 * minHops <= maxHops <= maxToolCalls): the environment's constructor checks them, so they are
 * reported at submission rather than when the job starts.
 */
function envConfigErrors(definition: EnvDefinition, config: Record<string, unknown>, field = 'environment.config'): FieldError[] {
  try {
    definition.create(config);
    return [];
  } catch (error) {
    if (!(error instanceof InvalidEnvConfigError)) throw error;
    const [, path, message] = /^\/(\w+) (.*)$/.exec(error.detail) ?? [undefined, undefined, error.detail];
    return [{ field: path ? `${field}.${path}` : field, message }];
  }
}

/**
 * The curricula (the warm-up's and the RL steps'): each config over the job's must be a valid
 * config of the environment, whose episodes fit the job's context window (an easier task, never a
 * longer one).
 */
function curriculumErrors(definition: EnvDefinition, spec: JobSpec): FieldError[] {
  const phases: Array<[Curriculum, string]> = [
    [spec.training.warmup, 'training.warmup.curriculumConfig'],
    [spec.training, 'training.curriculumConfig'],
  ];
  return phases.flatMap(([curriculum, field]) => (curriculum.curriculumShare === 0 ? [] : curriculumConfigErrors(definition, spec.environment.config, curriculum.curriculumConfig ?? {}, field)));
}

function curriculumConfigErrors(definition: EnvDefinition, envConfig: Record<string, unknown>, curriculumConfig: Record<string, unknown>, field: string): FieldError[] {
  const merged = checkAgainst<Record<string, unknown>>(definition.configSchema, { ...envConfig, ...curriculumConfig }, field);
  if (merged.errors.length > 0) return merged.errors;
  const errors = envConfigErrors(definition, merged.value, field);
  if (errors.length === 0 && definition.observationTokens(merged.value) > definition.observationTokens(envConfig)) {
    errors.push({ field, message: "its observations must fit environment.config's: a curriculum is an easier task, not a longer one" });
  }
  return errors;
}

function crossFieldErrors(spec: JobSpec, hasExpert: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const { rollout, model } = spec;
  if (rollout.groups * rollout.groupSize > MAX_EPISODES_PER_STEP) {
    errors.push({ field: 'rollout.groupSize', message: `groups × groupSize must be <= ${MAX_EPISODES_PER_STEP} (got ${rollout.groups * rollout.groupSize})` });
  }
  if (model.config.dModel % model.config.heads !== 0) {
    errors.push({ field: 'model.config.heads', message: `must divide model.config.dModel (${model.config.dModel})` });
  } else if (model.config.rope && (model.config.dModel / model.config.heads) % 2 !== 0) {
    errors.push({ field: 'model.config.heads', message: 'with rope, dModel / heads must be even' });
  }
  const minContext = rollout.maxTokensPerTurn + MIN_PROMPT_TOKENS;
  if (model.config.contextLength < minContext) {
    errors.push({ field: 'model.config.contextLength', message: `must be >= rollout.maxTokensPerTurn + ${MIN_PROMPT_TOKENS} (${minContext})` });
  }
  if (spec.training.warmup.kind === 'demonstrations' && !hasExpert) {
    errors.push({ field: 'training.warmup.kind', message: `environment ${spec.environment.id} has no expert; use format` });
  }
  return errors;
}

import { Type } from '@sinclair/typebox';
import { ALGORITHM_PRESETS, AlgorithmConfig, AlgorithmConfigSchema, AlgorithmId } from '../algorithms/presets';
import { ENVIRONMENTS } from '../envs/registry';
import { FieldError, SpecValidationError, checkAgainst } from './errors';
import {
  CollapseConfig,
  JobSpecInput,
  JobSpecSchema,
  MAX_EPISODES_PER_STEP,
  ModelConfig,
  RolloutConfig,
  TrainingConfig,
} from './job-spec';

export type WarmupKind = 'none' | 'format' | 'demonstrations';

/** A job spec with every default filled in and every value checked: what the trainer runs. */
export interface JobSpec {
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
const PartialAlgorithmConfig = Type.Partial(AlgorithmConfigSchema, { additionalProperties: false });

/**
 * Validates a raw job definition (DESIGN.md §4) and resolves it: schema defaults, the
 * environment's config defaults, the algorithm preset overlaid by `algorithm.config`.
 * Throws SpecValidationError listing every bad field with its bound.
 */
export function parseJobSpec(raw: unknown): JobSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SpecValidationError([{ field: '(body)', message: 'must be a JSON object' }]);
  }
  const top = checkAgainst<JobSpecInput>(JobSpecSchema, withEnvironmentRolloutDefaults(raw as Record<string, unknown>), '');
  const errors: FieldError[] = [...top.errors];
  const input = top.value;
  if (errors.some((e) => e.field === 'environment' || e.field === 'algorithm')) throw new SpecValidationError(errors);

  const envDefinition = Object.prototype.hasOwnProperty.call(ENVIRONMENTS, input.environment.id)
    ? ENVIRONMENTS[input.environment.id]
    : undefined;
  let envConfig: Record<string, unknown> = {};
  if (!envDefinition) {
    errors.push({ field: 'environment.id', message: `must be one of ${Object.keys(ENVIRONMENTS).join(', ')}` });
  } else {
    const env = checkAgainst<Record<string, unknown>>(envDefinition.configSchema, input.environment.config, 'environment.config');
    errors.push(...env.errors);
    envConfig = env.value;
  }
  const overrides = checkAgainst<Partial<AlgorithmConfig>>(PartialAlgorithmConfig, input.algorithm.config, 'algorithm.config');
  errors.push(...overrides.errors);
  if (errors.length > 0) throw new SpecValidationError(errors);

  const algorithmId = input.algorithm.id as AlgorithmId;
  const spec: JobSpec = {
    name: input.name ?? `${input.environment.id}-${algorithmId}`,
    environment: { id: input.environment.id, config: envConfig },
    algorithm: { id: algorithmId, config: { ...ALGORITHM_PRESETS[algorithmId].config, ...overrides.value } },
    model: { id: 'transformer', config: input.model!.config as ModelConfig },
    rollout: input.rollout as RolloutConfig,
    training: input.training as JobSpec['training'],
    collapse: input.collapse as CollapseConfig,
    priority: input.priority!,
    device: input.device as JobSpec['device'],
    labels: input.labels as Record<string, string>,
  };
  const hasExpert = Boolean(envDefinition!.expert);
  if (spec.training.warmup.kind === ('auto' as string)) spec.training.warmup.kind = hasExpert ? 'demonstrations' : 'format';
  errors.push(...crossFieldErrors(spec, hasExpert));
  if (errors.length > 0) throw new SpecValidationError(errors);
  return spec;
}

/** Overlays the user's rollout section on the environment's own rollout defaults. */
function withEnvironmentRolloutDefaults(raw: Record<string, unknown>): Record<string, unknown> {
  const envId = (raw.environment as { id?: unknown } | undefined)?.id;
  const definition = typeof envId === 'string' && Object.prototype.hasOwnProperty.call(ENVIRONMENTS, envId) ? ENVIRONMENTS[envId] : undefined;
  const rollout = raw.rollout ?? {};
  if (!definition?.rolloutDefaults || typeof rollout !== 'object' || rollout === null || Array.isArray(rollout)) return raw;
  return { ...raw, rollout: { ...definition.rolloutDefaults, ...rollout } };
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

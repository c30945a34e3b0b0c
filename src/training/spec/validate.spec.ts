import { SpecValidationError } from './errors';
import { parseJobSpec } from './validate';

function errorsOf(raw: unknown): Record<string, string> {
  try {
    parseJobSpec(raw);
  } catch (error) {
    if (error instanceof SpecValidationError) return Object.fromEntries(error.errors.map((e) => [e.field, e.message]));
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('parseJobSpec', () => {
  it('needs only environment.id and algorithm.id and fills every default', () => {
    const spec = parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' } });
    expect(spec.name).toBe('frozenlake-starpo-s');
    expect(spec.environment.config).toEqual({ size: 4, frozenProb: 0.8, slippery: true });
    expect(spec.model.config).toEqual({ layers: 2, dModel: 64, heads: 2, ffnMultiplier: 4, contextLength: 128, rope: true });
    expect(spec.rollout).toMatchObject({ groups: 8, groupSize: 16, maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerEpisode: 10, temperature: 1, maxTokensPerTurn: 32, think: true });
    expect(spec.training).toMatchObject({ steps: 200, seed: 1, learningRate: 0.001, evalEvery: 10, evalEpisodes: 128, checkpointEvery: 20 });
    expect(spec.training.warmup.kind).toBe('demonstrations');
    expect(spec.collapse).toEqual({ action: 'warn', rules: [], rollback: { learningRateScale: 0.5, maxRollbacks: 3 } });
  });

  it('applies the StarPO-S preset and lets algorithm.config override any value', () => {
    const spec = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s', config: { clipHigh: 0.3 } } });
    expect(spec.algorithm.config).toMatchObject({ advantage: 'gae', filter: 'std-top', filterKeepFraction: 0.25, clipLow: 0.2, clipHigh: 0.3, klCoef: 0, entropyCoef: 0.001 });
    const vanilla = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-grpo' } });
    expect(vanilla.algorithm.config).toMatchObject({ advantage: 'grpo', filter: 'none', clipHigh: 0.2, klCoef: 0.001 });
  });

  it('uses the environment’s own rollout budgets unless the spec sets them', () => {
    const bandit = parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' } });
    expect(bandit.rollout.maxTurns).toBe(1);
    expect(bandit.training.warmup.kind).toBe('format');
    expect(parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { maxTurns: 3 } }).rollout.maxTurns).toBe(3);
  });

  it('names each bad field with its bound', () => {
    const errors = errorsOf({
      environment: { id: 'frozenlake', config: { size: 99 } },
      algorithm: { id: 'starpo-s', config: { clipLow: -1 } },
      rollout: { groups: 0, temperature: 'hot' },
      training: { steps: 1e9, seed: 1.5 },
      model: { config: { dModel: 1024 } },
    });
    expect(errors).toEqual({
      'environment.config.size': 'must be <= 8',
      'algorithm.config.clipLow': 'must be >= 0',
      'rollout.groups': 'must be >= 1',
      'rollout.temperature': 'must be a number',
      'training.steps': 'must be <= 10000',
      'training.seed': 'must be an integer',
      'model.config.dModel': 'must be <= 256',
    });
  });

  it('rejects unknown fields, ids and missing requirements', () => {
    expect(errorsOf({ environment: { id: 'chess' }, algorithm: { id: 'starpo-s' } })).toEqual({
      'environment.id': 'must be one of bandit, sokoban, frozenlake',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'reinforce' } })['algorithm.id']).toMatch(/^must be one of starpo-ppo, starpo-grpo, starpo-s, starpo-s-grpo/);
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { gruops: 2 } })).toEqual({ 'rollout.gruops': 'is not a known field' });
    expect(errorsOf({ algorithm: { id: 'starpo-s' } })).toEqual({ environment: 'is required' });
    expect(errorsOf({ environment: { id: 'constructor' }, algorithm: { id: 'starpo-s' } })).toHaveProperty(['environment.id']);
    expect(errorsOf([1, 2])).toEqual({ '(body)': 'must be a JSON object' });
  });

  it('checks fields against each other', () => {
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { groups: 64, groupSize: 64 } })).toEqual({
      'rollout.groupSize': 'groups × groupSize must be <= 1024 (got 4096)',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, model: { config: { dModel: 30, heads: 4 } } })).toEqual({
      'model.config.heads': 'must divide model.config.dModel (30)',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } })).toEqual({
      'training.warmup.kind': 'environment bandit has no expert; use format',
    });
    expect(errorsOf({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, model: { config: { contextLength: 40 } } })).toEqual({
      'model.config.contextLength': 'must be >= rollout.maxTokensPerTurn + 16 (48)',
    });
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpecValidationError } from './errors';
import { parseJobSpec, parseStoredJobSpec } from './validate';

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
  it('needs only environment.id and algorithm.id and fills every default: RAGEN’s protocol and the measured recipe', () => {
    const spec = parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' } });
    expect(spec.specVersion).toBe(2);
    expect(spec.name).toBe('frozenlake-starpo-s');
    expect(spec.environment.config).toEqual({ size: 4, frozenProb: 0.8, slippery: true });
    // The context holds a whole episode: 5 turns of <obs> + 19 grid tokens + <left> + 2 digits
    // + <resp> + 16 response tokens + <rwd> + up to 6 reward tokens, after <bos>.
    expect(spec.model.config).toEqual({ layers: 2, dModel: 64, heads: 4, ffnMultiplier: 4, contextLength: 1 + 5 * (1 + 19 + 1 + 2 + 1 + 16 + 1 + 6), rope: true });
    expect(spec.rollout).toMatchObject({ groups: 8, groupSize: 16, maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerEpisode: 10, temperature: 1, maxTokensPerTurn: 16, think: false, historyFormat: 'ragen' });
    // The slippery lake from demonstrations learns at 0.0003 (recipes.ts); the schema's default is 0.001.
    expect(spec.training).toMatchObject({ steps: 200, seed: 1, learningRate: 0.0003, lrSchedule: 'cosine', evalEvery: 10, evalEpisodes: 256, evalTemperature: 0.5, evalGreedy: false, checkpointEvery: 20 });
    expect(spec.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 1600, batchSize: 128, lrSchedule: 'constant' });
    expect(spec.algorithm.config).toMatchObject({ miniBatchSize: 32, criticLearningRateScale: 10, weightDecay: 0.01, klCoef: 0, entropyCoef: 0.001 });
    expect(spec.algorithm.config.miniBatches).toBeUndefined();
    expect(spec.collapse).toEqual({ action: 'warn', rules: [], rollback: { learningRateScale: 0.5, maxRollbacks: 3 } });
    expect(parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' } }).environment.config).toMatchObject({ difficulty: 'ragen' });
  });

  it('gives the non-slippery lake a longer imitation and the slippery one a lower RL rate, by its config with the defaults filled in, under the job’s own values', () => {
    const warmupOf = (config: Record<string, unknown>, warmup: Record<string, unknown> = {}) =>
      parseJobSpec({ environment: { id: 'frozenlake', config }, algorithm: { id: 'starpo-s' }, training: { warmup } }).training.warmup;
    expect(warmupOf({ slippery: false })).toMatchObject({ kind: 'demonstrations', steps: 10000, batchSize: 128 });
    expect(warmupOf({ slippery: true })).toMatchObject({ steps: 1600, batchSize: 128 });
    expect(warmupOf({ size: 4 })).toMatchObject({ steps: 1600 }); // slippery by default, as RAGEN's lake
    expect(warmupOf({ slippery: false }, { steps: 400 })).toMatchObject({ steps: 400, batchSize: 128 });
    // RL's learning rate: 0.0003 on the slippery lake from demonstrations, the schema's 0.001 elsewhere, the job's own where given.
    const rateOf = (config: Record<string, unknown>, training: Record<string, unknown> = {}) =>
      parseJobSpec({ environment: { id: 'frozenlake', config }, algorithm: { id: 'starpo-s' }, training }).training.learningRate;
    expect([rateOf({ slippery: true }), rateOf({}), rateOf({ slippery: false }), rateOf({ slippery: true }, { learningRate: 0.002 })]).toEqual([0.0003, 0.0003, 0.001, 0.002]);
    expect(rateOf({ slippery: true }, { warmup: { kind: 'format' } })).toBe(0.001);
    // The model is the recipe's on both maps.
    const model = (slippery: boolean) => parseJobSpec({ environment: { id: 'frozenlake', config: { slippery } }, algorithm: { id: 'starpo-s' } }).model.config;
    expect(model(false)).toEqual(model(true));
  });

  it('gives lookup-qa from demonstrations the token shift and a warm-up of 3200 steps of 64 turns, the first half on two-hop questions where questions take 1 to 3, and from format the small model without it', () => {
    // test/learning-long/lookup-qa.spec.ts trains this recipe (too long for CI).
    const demonstrations = parseJobSpec({ environment: { id: 'lookup-qa' }, algorithm: { id: 'starpo-s' } });
    expect(demonstrations.model.config).toMatchObject({ layers: 2, dModel: 32, heads: 2, tokenShift: true });
    expect(demonstrations.model.config.tiedEmbeddings).toBeUndefined();
    expect(demonstrations.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 3200, batchSize: 64, lrSchedule: 'constant', curriculumShare: 0.5, curriculumConfig: { maxHops: 2 } });
    // Questions of at most two hops already: no curriculum, which would be the task itself.
    const shorter = parseJobSpec({ environment: { id: 'lookup-qa', config: { maxHops: 2 } }, algorithm: { id: 'starpo-s' } });
    expect(shorter.training.warmup).toMatchObject({ steps: 3200, curriculumShare: 0, curriculumConfig: {} });
    const format = parseJobSpec({ environment: { id: 'lookup-qa' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    expect(format.model.config.tokenShift).toBeUndefined();
  });

  it('gives Sokoban from demonstrations width 64, grid positions and a warm-up of 4800 steps of 128 turns, and from format the small model with grid positions', () => {
    const demonstrations = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' } });
    expect(demonstrations.model.config).toMatchObject({ layers: 2, dModel: 64, heads: 4, gridPositions: true });
    expect(demonstrations.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 4800, batchSize: 128 });
    const format = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    expect(format.model.config).toMatchObject({ layers: 2, dModel: 32, heads: 2, gridPositions: true });
    expect(format.training.warmup).toMatchObject({ kind: 'format', steps: 150 });
  });

  it('gives FrozenLake and Sokoban from the format warm-up self-imitation under any preset, and lets the job turn it off', () => {
    const format = (config?: Record<string, unknown>, id = 'starpo-s') =>
      parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id, ...(config ? { config } : {}) }, training: { warmup: { kind: 'format' } } }).algorithm.config;
    expect(format()).toMatchObject({ selfImitationSteps: 16, selfImitationLearningRate: 0.003, selfImitationBufferSize: 2048, selfImitationBatchSize: 32, filter: 'std-top' });
    expect(format(undefined, 'starpo-grpo')).toMatchObject({ selfImitationSteps: 16, advantage: 'grpo' });
    // The lake's replay learns from 64 maps of 4 episodes a step, at one action an answer: in
    // RAGEN's 5 turns on the non-slippery lake, in 10 on the slippery one (RAGEN's 10 actions).
    const rollout = (slippery: boolean, own?: Record<string, unknown>) =>
      parseJobSpec({ environment: { id: 'frozenlake', config: { slippery } }, algorithm: { id: 'starpo-s' }, ...(own ? { rollout: own } : {}), training: { warmup: { kind: 'format' } } }).rollout;
    expect(rollout(false)).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1, maxTurns: 5, maxActionsPerEpisode: 10 });
    expect(rollout(true)).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 });
    expect(rollout(false, { groups: 8, groupSize: 16 })).toMatchObject({ groups: 8, groupSize: 16 });
    expect(rollout(true, { maxTurns: 5 })).toMatchObject({ maxTurns: 5, maxActionsPerTurn: 1 });
    // Its replay draws the maps it rarely solves most (SIL's weighting), on both lakes.
    const replay = (slippery: boolean) =>
      parseJobSpec({ environment: { id: 'frozenlake', config: { slippery } }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } }).algorithm.config;
    expect(replay(false)).toMatchObject({ selfImitationSteps: 16, selfImitationSelect: 'advantage', selfImitationBufferSize: 2048 });
    expect(replay(true)).toMatchObject({ selfImitationSteps: 16, selfImitationSelect: 'advantage' });
    // The slippery lake's first half of RL steps plays the same maps without slips; from
    // demonstrations, and on the lake without slips, there is no curriculum; a job may set its own.
    const training = (slippery: boolean, kind = 'format', own: Record<string, unknown> = {}) =>
      parseJobSpec({ environment: { id: 'frozenlake', config: { slippery } }, algorithm: { id: 'starpo-s' }, training: { ...own, warmup: { kind } } }).training;
    expect(training(true)).toMatchObject({ curriculumShare: 0.5, curriculumConfig: { slippery: false } });
    expect(training(false)).toMatchObject({ curriculumShare: 0, curriculumConfig: {} });
    expect(training(true, 'demonstrations')).toMatchObject({ curriculumShare: 0, curriculumConfig: {} });
    expect(training(true, 'format', { curriculumShare: 0 })).toMatchObject({ curriculumShare: 0 });
    expect(format({ selfImitationSteps: 0 })).toMatchObject({ selfImitationSteps: 0, selfImitationBufferSize: 2048 });
    const sokoban = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    // Sokoban plays the slippery lake's rollout without its curriculum: ten turns of one action,
    // 64 × 4, the replay weighted by advantage (recipes.ts).
    expect(sokoban.algorithm.config).toMatchObject({ selfImitationSteps: 16, selfImitationSelect: 'advantage', selfImitationLearningRate: 0.003, selfImitationBufferSize: 2048 });
    expect(sokoban.rollout).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 });
    expect(sokoban.training.curriculumShare).toBe(0);
    // From demonstrations, and on environments without the measurement, it stays off.
    expect(parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' } }).algorithm.config.selfImitationSteps).toBe(0);
    expect(parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' } }).algorithm.config.selfImitationSteps).toBe(0);
  });

  it('lets the job’s own values win over the recipe, section by section', () => {
    const spec = parseJobSpec({
      environment: { id: 'frozenlake' },
      algorithm: { id: 'starpo-s' },
      model: { config: { dModel: 64 } },
      rollout: { think: true, maxTokensPerTurn: 24 },
      training: { lrSchedule: 'constant', warmup: { kind: 'format' } },
    });
    // The slippery lake's format recipe plays ten turns: ten of these 55-token turns would take 551
    // positions, so the window is the cap, 512.
    expect(spec.model.config).toMatchObject({ dModel: 64, layers: 2, contextLength: Math.min(512, 1 + 10 * (1 + 19 + 1 + 2 + 1 + 24 + 1 + 6)) });
    expect(spec.rollout).toMatchObject({ maxTurns: 10 });
    expect(spec.rollout).toMatchObject({ think: true, maxTokensPerTurn: 24 });
    expect(spec.training).toMatchObject({ lrSchedule: 'constant', warmup: { kind: 'format', steps: 150 } });
  });

  it('gives each preset RAGEN’s KL: none for PPO and StarPO-S, k1 0.001 for GRPO', () => {
    const kl = (id: string) => parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id } }).algorithm.config.klCoef;
    expect([kl('starpo-ppo'), kl('starpo-grpo'), kl('starpo-s'), kl('starpo-s-grpo')]).toEqual([0, 0.001, 0, 0]);
  });

  it('resolves DAPO and GiGPO, and takes the AEPO knobs as overrides', () => {
    const config = (algorithm: Record<string, unknown>) => parseJobSpec({ environment: { id: 'frozenlake' }, algorithm }).algorithm.config;
    expect(config({ id: 'dapo' })).toMatchObject({ advantage: 'grpo', clipLow: 0.2, clipHigh: 0.28, lossAggregation: 'token-mean', klCoef: 0, dynamicSampling: true, dynamicSamplingMaxBatches: 10 });
    expect(config({ id: 'gigpo' })).toMatchObject({ advantage: 'gigpo', gigpoStepWeight: 1, gigpoGamma: 0.95, gigpoNormalization: 'mean-std', dynamicSampling: false });
    for (const id of ['starpo-ppo', 'starpo-grpo', 'starpo-s', 'starpo-s-grpo', 'dapo', 'gigpo']) {
      expect(config({ id })).toMatchObject({ clipMode: 'ppo', entropyAdvantageAlpha: 0 });
    }
    expect(config({ id: 'starpo-s-grpo', config: { clipMode: 'aepo', entropyAdvantageAlpha: 0.3 } })).toMatchObject({ clipMode: 'aepo', entropyAdvantageAlpha: 0.3 });
    const errors = errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'dapo', config: { clipMode: 'hard', dynamicSamplingMaxBatches: 0 } } });
    expect(Object.keys(errors)).toEqual(expect.arrayContaining(['algorithm.config.clipMode', 'algorithm.config.dynamicSamplingMaxBatches']));
  });

  it('reads a spec stored before version 2 back as it ran then', () => {
    const stored = JSON.parse(readFileSync(join(__dirname, '../../../test/fixtures/v1-frozenlake.spec.json'), 'utf8'));
    const spec = parseStoredJobSpec(stored);
    expect(spec.specVersion).toBe(1);
    expect(spec.rollout.historyFormat).toBe('sign');
    expect(spec.algorithm.config).toMatchObject({ miniBatches: 1, weightDecay: 0, criticLearningRateScale: 1, klCoef: 0.001 });
    expect(spec.model.config).toEqual(stored.model.config);
    expect(spec.training).toMatchObject({ evalEpisodes: 4, evalTemperature: 0 });
    const sokoban = parseStoredJobSpec({ ...stored, environment: { id: 'sokoban', config: { width: 6, height: 6, boxes: 1, reverseSteps: 8 } } });
    expect(sokoban.environment.config).toMatchObject({ difficulty: 'hard', reverseSteps: 8 });
    // A spec stored by this version is read back unchanged.
    const current = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' } });
    expect(parseStoredJobSpec(JSON.parse(JSON.stringify(current)))).toEqual(current);
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
      'model.config.dModel': 'must be <= 128',
    });
  });

  it('reports constraints between environment fields at submission, on the field', () => {
    expect(errorsOf({ environment: { id: 'lookup-qa', config: { maxHops: 3, maxToolCalls: 2 } }, algorithm: { id: 'starpo-s' } })).toEqual({
      'environment.config.maxHops': 'must be <= maxToolCalls (2), or questions are unanswerable',
    });
    expect(errorsOf({ environment: { id: 'lookup-qa', config: { minHops: 2, maxHops: 1 } }, algorithm: { id: 'starpo-s' } })).toEqual({
      'environment.config.minHops': 'must be <= maxHops (1)',
    });
    expect(parseJobSpec({ environment: { id: 'lookup-qa', config: { maxHops: 2, maxToolCalls: 2 } }, algorithm: { id: 'starpo-s' } }).environment.config).toMatchObject({ maxHops: 2 });
  });

  it('checks the warm-up curriculum as a config of the environment, whose observations are no longer than the job’s', () => {
    const lookup = (warmup: Record<string, unknown>, config: Record<string, unknown> = {}) => ({ environment: { id: 'lookup-qa', config }, algorithm: { id: 'starpo-s' }, training: { warmup: { steps: 100, ...warmup } } });
    const resolved = parseJobSpec(lookup({ curriculumShare: 0.4, curriculumConfig: { maxHops: 1 } }));
    expect(resolved.training.warmup).toMatchObject({ curriculumShare: 0.4, curriculumConfig: { maxHops: 1 } });
    expect(parseJobSpec(lookup({ curriculumShare: 0 })).training.warmup).toMatchObject({ curriculumShare: 0, curriculumConfig: {} });
    expect(errorsOf(lookup({ curriculumShare: 1.5 }))).toEqual({ 'training.warmup.curriculumShare': 'must be <= 1' });
    expect(errorsOf(lookup({ curriculumShare: 0.4, curriculumConfig: { maxHops: 7 } }))).toEqual({ 'training.warmup.curriculumConfig.maxHops': 'must be <= 3' });
    expect(errorsOf(lookup({ curriculumShare: 0.4, curriculumConfig: { hops: 1 } }))).toEqual({ 'training.warmup.curriculumConfig.hops': 'is not a known field' });
    expect(errorsOf(lookup({ curriculumShare: 0.4, curriculumConfig: { maxHops: 1 } }, { minHops: 2 }))).toEqual({ 'training.warmup.curriculumConfig.minHops': 'must be <= maxHops (1)' });
    expect(errorsOf(lookup({ curriculumShare: 0.4, curriculumConfig: { maxHops: 3 } }, { maxHops: 1 }))).toEqual({
      'training.warmup.curriculumConfig': "its observations must fit environment.config's: a curriculum is an easier task, not a longer one",
    });
  });

  it("checks the RL steps' curriculum the same way, naming its own field", () => {
    const lake = (training: Record<string, unknown>, config: Record<string, unknown> = {}) => ({ environment: { id: 'frozenlake', config }, algorithm: { id: 'starpo-s' }, training });
    expect(parseJobSpec(lake({ curriculumShare: 0.5, curriculumConfig: { slippery: false } })).training).toMatchObject({ curriculumShare: 0.5, curriculumConfig: { slippery: false } });
    expect(parseJobSpec(lake({})).training).toMatchObject({ curriculumShare: 0, curriculumConfig: {} });
    expect(errorsOf(lake({ curriculumShare: -0.1 }))).toEqual({ 'training.curriculumShare': 'must be >= 0' });
    expect(errorsOf(lake({ curriculumShare: 0.5, curriculumConfig: { slipery: false } }))).toEqual({ 'training.curriculumConfig.slipery': 'is not a known field' });
    expect(errorsOf(lake({ curriculumShare: 0.5, curriculumConfig: { size: 6 } }, { size: 4 }))).toEqual({
      'training.curriculumConfig': "its observations must fit environment.config's: a curriculum is an easier task, not a longer one",
    });
    // Off, its config is not read: nothing to check.
    expect(() => parseJobSpec(lake({ curriculumShare: 0, curriculumConfig: { size: 6 } }, { size: 4 }))).not.toThrow();
  });

  it('rejects unknown fields, ids and missing requirements', () => {
    expect(errorsOf({ environment: { id: 'chess' }, algorithm: { id: 'starpo-s' } })).toEqual({
      'environment.id': 'must be one of bandit, sokoban, frozenlake, lookup-qa',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'reinforce' } })['algorithm.id']).toMatch(/^must be one of starpo-ppo, starpo-grpo, starpo-s, starpo-s-grpo, dapo, gigpo/);
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { gruops: 2 } })).toEqual({ 'rollout.gruops': 'is not a known field' });
    expect(errorsOf({ algorithm: { id: 'starpo-s' } })).toEqual({ environment: 'is required' });
    expect(errorsOf({ environment: { id: 'constructor' }, algorithm: { id: 'starpo-s' } })).toHaveProperty(['environment.id']);
    expect(errorsOf([1, 2])).toEqual({ '(body)': 'must be a JSON object' });
  });

  it('checks fields against each other', () => {
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, rollout: { groups: 64, groupSize: 32 } })).toEqual({
      'rollout.groupSize': 'groups × groupSize must be <= 256 (got 2048)',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, model: { config: { dModel: 30, heads: 4 } } })).toEqual({
      'model.config.heads': 'must divide model.config.dModel (30)',
    });
    expect(errorsOf({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } })).toEqual({
      'training.warmup.kind': 'environment bandit has no expert; use format',
    });
    expect(errorsOf({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, rollout: { maxTokensPerTurn: 24 }, model: { config: { contextLength: 39 } } })).toEqual({
      'model.config.contextLength': 'must be >= rollout.maxTokensPerTurn + 16 (40)',
    });
    expect(errorsOf({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s', config: { miniBatches: 4, miniBatchSize: 16 } } })).toEqual({
      'algorithm.config.miniBatches': 'give miniBatchSize or miniBatches, not both',
    });
  });
});

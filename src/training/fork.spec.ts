import { forkSpec, mergeOverrides } from './fork';
import { SpecValidationError } from './spec/errors';
import { parseJobSpec } from './spec/validate';

const source = parseJobSpec({
  name: 'lake',
  environment: { id: 'frozenlake', config: { slippery: false } },
  algorithm: { id: 'starpo-s-grpo' },
  model: { config: { layers: 1, dModel: 16, contextLength: 64 } },
  rollout: { maxTokensPerTurn: 16 },
  training: { steps: 20, learningRate: 0.001 },
  labels: { project: 'x' },
});

function fieldsOf(run: () => unknown): { field: string; message: string }[] {
  try {
    run();
  } catch (error) {
    if (error instanceof SpecValidationError) return error.errors;
    throw error;
  }
  throw new Error('no SpecValidationError');
}

describe('mergeOverrides', () => {
  it('merges objects key by key and replaces everything else', () => {
    expect(mergeOverrides({ a: { b: 1, c: [1, 2] }, d: 'x' }, { a: { c: [3] }, e: 2 })).toEqual({ a: { b: 1, c: [3] }, d: 'x', e: 2 });
    expect(mergeOverrides({ a: 1 }, undefined)).toEqual({ a: 1 });
  });
});

describe('forkSpec', () => {
  it('continues the source with a lower learning rate and more steps, keeping everything else', () => {
    const fork = forkSpec(source, 10, { training: { learningRate: 0.0005, steps: 40 }, labels: { arm: 'low-lr' } }, 'lake-fork', 'body.overrides');
    expect(fork).toEqual({ ...source, name: 'lake-fork', training: { ...source.training, learningRate: 0.0005, steps: 40 }, labels: { project: 'x', arm: 'low-lr' } });
  });

  it('takes environment configs the checkpoint can read (the slippery variant), and another preset with its own values', () => {
    expect(forkSpec(source, 10, { environment: { config: { slippery: true } } }, 'f', 'body.overrides').environment.config.slippery).toBe(true);
    // Vanilla StarPO-GRPO's preset has a KL term, whose reference the checkpoint lacks: turned off here.
    const grpo = forkSpec(source, 10, { algorithm: { id: 'starpo-grpo', config: { klCoef: 0 } } }, 'f', 'body.overrides');
    expect(grpo.algorithm).toMatchObject({ id: 'starpo-grpo', config: { filter: 'none' } });
  });

  it('refuses overrides that would change the model’s shape or vocabulary, naming each field', () => {
    const shape = fieldsOf(() => forkSpec(source, 10, { model: { config: { dModel: 32, layers: 2 } } }, 'f', 'body.overrides'));
    expect(shape).toHaveLength(2);
    expect(shape).toEqual(
      expect.arrayContaining([
        { field: 'body.overrides.model.config.layers', message: "would change the model's shape: the checkpoint has layers 1" },
        { field: 'body.overrides.model.config.dModel', message: "would change the model's shape: the checkpoint has dModel 16" },
      ]),
    );
    expect(fieldsOf(() => forkSpec(source, 10, { environment: { id: 'sokoban', config: {} } }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.environment.id']);
    expect(fieldsOf(() => forkSpec(source, 10, { rollout: { historyFormat: 'sign' } }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.rollout.historyFormat']);
  });

  it('refuses networks the checkpoint has no weights for, observations it cannot read, and no steps left', () => {
    expect(fieldsOf(() => forkSpec(source, 10, { algorithm: { id: 'starpo-s' } }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.algorithm.config.advantage']);
    expect(fieldsOf(() => forkSpec(source, 10, { algorithm: { config: { klCoef: 0.01 } } }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.algorithm.config.klCoef']);
    // 7·7 cells + 6 newlines + <bos> <obs> <left> 1 0 <resp> = 60 > 64 − 16.
    expect(fieldsOf(() => forkSpec(source, 10, { environment: { config: { size: 7 } } }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.environment.config']);
    expect(fieldsOf(() => forkSpec(source, 20, {}, 'f', 'body.overrides'))).toEqual([{ field: 'body.overrides.training.steps', message: "must be > 20, the checkpoint's step (the fork trains steps 21…training.steps)" }]);
  });

  it('reports invalid values like a submission, under the overrides', () => {
    expect(fieldsOf(() => forkSpec(source, 10, { training: { learningRate: 5 }, bogus: 1 }, 'f', 'body.overrides'))).toEqual(
      expect.arrayContaining([{ field: 'body.overrides.bogus', message: 'is not a known field' }, { field: 'body.overrides.training.learningRate', message: expect.stringMatching(/^must be <= /) }]),
    );
    expect(fieldsOf(() => forkSpec(source, 10, { specVersion: 1 }, 'f', 'body.overrides')).map((e) => e.field)).toEqual(['body.overrides.specVersion']);
  });
});

import { useTestBackend } from '../../../test/support/tf';
import { ACTIVATION_BUDGET_FLOATS } from '../accumulate';
import { parseJobSpec } from '../spec/validate';
import { Trainer } from '../trainer';
import { GENERATION_BUDGET_FLOATS, MIN_GENERATION_ROWS, generationBudget } from './policy';
import { TransformerLM } from './transformer';

function actorOf(trainer: Trainer): TransformerLM {
  return (trainer as unknown as { learner: { actor: TransformerLM } }).learner.actor;
}

describe('the generation budget', () => {
  beforeAll(useTestBackend);

  it('is the floats asked for, or minRows rows of the full context where those need more', () => {
    const model = new TransformerLM({ vocabSize: 10, contextLength: 8, layers: 1, dModel: 4, heads: 2, ffnMultiplier: 2 }, 1);
    // One row of 8 tokens: 8·(20·4 + 2·2·4) + 3·2·8·8 = 768 + 384 = 1152 per layer, plus the logits
    // 6·8·10 = 480: 1632 floats forward, 3264 with gradients.
    expect(model.activationFloats(1, 8, false)).toBe(1632);
    expect(model.budgetFor(10_000, 4, false)).toBe(10_000); // 4·1632 = 6528 fit
    expect(model.budgetFor(10_000, 4, true)).toBe(4 * 3264); // 13056 do not
    expect(model.rowsWithin(model.budgetFor(1000, 4, true), 8, true)).toBe(4);
    model.dispose();
  });

  it('leaves every default job its chunks (and so its numerics), and gives the largest job the floor', async () => {
    const defaults = [
      { environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } },
      { environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } },
      { environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, rollout: { think: true, maxTokensPerTurn: 24 } },
      { environment: { id: 'lookup-qa' }, algorithm: { id: 'starpo-s' } },
    ];
    for (const spec of defaults) {
      const trainer = await Trainer.create(parseJobSpec(spec));
      expect(generationBudget(actorOf(trainer))).toBe(GENERATION_BUDGET_FLOATS);
      trainer.dispose();
    }
    // The largest job the bounds allow (test/capacity/largest-job.spec.ts): two prompts fill 64 M
    // floats, and training keeps one row a chunk (the floor did not pay for its memory there).
    const largest = await Trainer.create(
      parseJobSpec({
        environment: { id: 'sokoban' },
        algorithm: { id: 'starpo-ppo' },
        model: { config: { layers: 4, dModel: 128, heads: 8, ffnMultiplier: 4, contextLength: 512 } },
        rollout: { groups: 8, groupSize: 32, maxTokensPerTurn: 48, think: true },
      }),
    );
    const actor = actorOf(largest);
    expect(actor.rowsWithin(ACTIVATION_BUDGET_FLOATS, 512, true)).toBe(1);
    expect(actor.rowsWithin(GENERATION_BUDGET_FLOATS, 512, false)).toBe(2);
    expect(actor.rowsWithin(generationBudget(actor), 512, false)).toBe(MIN_GENERATION_ROWS);
    largest.dispose();
  });
});

import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { tokenLogProbs } from './algorithms/losses';
import { Adam } from './policy/adam';
import { PackedBatch, packTurns } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { FrozenLakeEnv } from './envs/frozenlake';
import { turnOptimalActions } from './envs/frozenlake-optimal';
import { getEnvDefinition } from './envs/registry';
import { expertActions, spreadPlan, supervisedStep } from './warmup';

describe('expertActions', () => {
  const frozenlake = getEnvDefinition('frozenlake');

  it('spreads the plan over the turns left: ceil(length / turns), at least 1, at most the turn cap and the actions left', () => {
    const plan = ['Up', 'Up', 'Left', 'Left', 'Down', 'Down', 'Right'];
    expect(spreadPlan(plan, { turns: 5, actionsPerTurn: 5, actions: 10 })).toEqual(['Up', 'Up']); // ceil(7/5) = 2
    expect(spreadPlan(plan, { turns: 2, actionsPerTurn: 3, actions: 10 })).toEqual(['Up', 'Up', 'Left']); // ceil(7/2) = 4, capped at 3
    expect(spreadPlan(plan, { turns: 1, actionsPerTurn: 5, actions: 2 })).toEqual(['Up', 'Up']); // 2 actions left
    expect(spreadPlan(plan, { turns: 10, actionsPerTurn: 5, actions: 10 })).toEqual(['Up']); // ceil(0.7) = 1
  });

  it("takes the slippery lake's turns from its turn expert and the non-slippery lake's from the spread shortest path", async () => {
    const turn = { turns: 5, actionsPerTurn: 5, actions: 10 };
    const slippery = new FrozenLakeEnv({ slippery: true });
    slippery.reset(4);
    expect(await expertActions(frozenlake, slippery, turn)).toEqual(turnOptimalActions(slippery, { ...turn, actionsPerTurn: 2 }));
    const solid = new FrozenLakeEnv({ slippery: false });
    solid.reset(4);
    expect(await expertActions(frozenlake, solid, turn)).toEqual(spreadPlan(await frozenlake.expert!(solid), turn));
  });
});

describe('supervisedStep', () => {
  beforeAll(useTestBackend);

  it('adds coef × the mean cross-entropy of the feedback tokens to the responses’ mean cross-entropy', () => {
    const model = new TransformerLM({ vocabSize: 10, contextLength: 16, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true }, 2);
    // One episode: context [1, 2], response [3, 4], feedback [5, 6], response [7].
    const rows = packTurns([{ context: [1, 2], response: [3, 4] }, { context: [1, 2, 3, 4, 5, 6], response: [7] }]);
    const batch = new PackedBatch(rows);
    const lp = tf.tidy(() => tokenLogProbs(model.forward(batch.inputTensor()).logits, batch.targetOneHot(10)).arraySync() as number[][])[0];
    // Token i is predicted at position i − 1: responses at 2, 3, 6 → positions 1, 2, 5; feedback 4, 5 → 3, 4.
    const responses = -(lp[1] + lp[2] + lp[5]) / 3;
    const feedback = -(lp[3] + lp[4]) / 2;
    // A learning rate of 0 keeps the weights, so both losses are measured at the same point.
    const frozen = new Adam(model.namedVariables(), 0);
    expect(supervisedStep(model, frozen, rows, 1)).toBeCloseTo(responses, 5);
    expect(supervisedStep(model, frozen, rows, 1, 0.5)).toBeCloseTo(responses + 0.5 * feedback, 5);
    frozen.dispose();
    model.dispose();
  });

  it('takes the same step whether the batch is one chunk or one chunk per row', () => {
    const config = { vocabSize: 10, contextLength: 16, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true };
    const whole = new TransformerLM(config, 3);
    const chunked = new TransformerLM(config, 3);
    // Three episodes of unequal length, so a per-row split changes each chunk's token count.
    const rows = [
      ...packTurns([{ context: [1, 2], response: [3, 4] }, { context: [1, 2, 3, 4, 5, 6], response: [7] }]),
      ...packTurns([{ context: [2], response: [8, 9, 3] }]),
      ...packTurns([{ context: [4, 4, 1], response: [5] }]),
    ];
    const wholeOptimizer = new Adam(whole.namedVariables(), 0.01);
    const chunkedOptimizer = new Adam(chunked.namedVariables(), 0.01);
    const wholeLoss = supervisedStep(whole, wholeOptimizer, rows, 1, 0.5);
    // A budget of the shortest row's forward and backward (4 tokens): every row is its own chunk.
    const chunkedLoss = supervisedStep(chunked, chunkedOptimizer, rows, 1, 0.5, chunked.activationFloats(1, 4, true));
    expect(chunkedLoss).toBeCloseTo(wholeLoss, 5);
    const weights = (model: TransformerLM) => model.namedVariables().flatMap(([, v]) => Array.from(v.dataSync()));
    const a = weights(whole);
    const b = weights(chunked);
    expect(Math.max(...a.map((x, i) => Math.abs(x - b[i])))).toBeLessThan(1e-5);
    // And the step did move the weights, so the agreement is not that of two untouched models.
    const initial = new TransformerLM(config, 3);
    const start = weights(initial);
    expect(Math.max(...a.map((x, i) => Math.abs(x - start[i])))).toBeGreaterThan(1e-4);
    initial.dispose();
    wholeOptimizer.dispose();
    chunkedOptimizer.dispose();
    whole.dispose();
    chunked.dispose();
  });
});

import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { entropyShapedAdvantages, groupZScores } from './algorithms/advantages';
import { tokenEntropy, tokenLogProbs } from './algorithms/losses';
import { ALGORITHM_PRESETS, AlgorithmConfig } from './algorithms/presets';
import { Adam } from './policy/adam';
import { PackedBatch, turnRow } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import type { Trajectory, Turn } from './rollout/engine';
import { Learner, updatePolicy } from './update';
import { assignGigpo, buildRows, minibatches } from './update-rows';

const VOCAB = 12;
const config = { vocabSize: VOCAB, contextLength: 32, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true };

/** One-turn trajectories whose old log-probabilities are the actor's own: the ratio starts at 1. */
function trajectories(actor: TransformerLM, count: number, rng: Rng): Trajectory[][] {
  const turns = Array.from({ length: count }, () => {
    const context = [1, ...Array.from({ length: 4 }, () => 2 + rng.int(VOCAB - 2))];
    const response = Array.from({ length: 3 }, () => 2 + rng.int(VOCAB - 2));
    return { context, response };
  });
  const batch = new PackedBatch(turns.map(turnRow));
  const logProbs = tf.tidy(() => tokenLogProbs(actor.forward(batch.inputTensor()).logits, batch.targetOneHot(VOCAB), 1));
  const old = batch.gatherResponse(logProbs);
  logProbs.dispose();
  const all = turns.map(({ context, response }, i) => {
    const turn = { context, response: { tokens: response, logProbs: old[i], entropies: response.map(() => 1), stopped: true }, reward: 0 } as unknown as Turn;
    // Half the groups' samples succeed: GRPO advantages of ±1.
    return { group: Math.floor(i / 2), sample: i % 2, seed: i, turns: [turn], return: i % 2, success: i % 2 === 1 } as unknown as Trajectory;
  });
  return Array.from({ length: count / 2 }, (_, g) => all.slice(2 * g, 2 * g + 2));
}

function learnerWith(actor: TransformerLM): Learner {
  return { actor, actorOptimizer: new Adam(actor.namedVariables(), 0.05), critic: null, criticOptimizer: null, reference: null };
}

const grpo: AlgorithmConfig = { ...ALGORITHM_PRESETS['starpo-grpo'].config, klCoef: 0, entropyCoef: 0 };

describe('updatePolicy', () => {
  beforeAll(useTestBackend);

  it('keeps the sampling log-probabilities as π_old, so the ratio moves off 1 on a later minibatch', () => {
    const one = new TransformerLM(config, 5);
    const two = new TransformerLM(config, 5);
    const groups = trajectories(one, 8, new Rng(1));
    // One minibatch of all 8: the only optimiser step trains at π_old itself, k3 = 0.
    const single = updatePolicy(learnerWith(one), groups, { ...grpo, miniBatchSize: 8 }, 1, new Rng(2));
    expect(single['update/optimiser_steps']).toBe(1);
    expect(single['kl/minibatch']).toBeLessThan(1e-9);
    expect(single['clip/fraction_high'] + single['clip/fraction_low']).toBe(0);
    // Two minibatches of 4: the second trains a policy the first already moved.
    const split = updatePolicy(learnerWith(two), groups, { ...grpo, miniBatchSize: 4 }, 1, new Rng(2));
    expect(split['update/optimiser_steps']).toBe(2);
    expect(split['kl/minibatch']).toBeGreaterThan(1e-4);
    expect(split['clip/fraction_high'] + split['clip/fraction_low']).toBeGreaterThan(0);
    one.dispose();
    two.dispose();
  });

  it('sums chunk gradients to exactly the whole minibatch’s gradient', () => {
    const whole = new TransformerLM(config, 9);
    const chunked = new TransformerLM(config, 9);
    const groups = trajectories(whole, 8, new Rng(3));
    updatePolicy(learnerWith(whole), groups, { ...grpo, miniBatchSize: 8 }, 1, new Rng(4));
    // A budget of one row's forward and backward: every row is its own chunk.
    updatePolicy(learnerWith(chunked), groups, { ...grpo, miniBatchSize: 8 }, 1, new Rng(4), chunked.activationFloats(1, 8, true));
    const after = (model: TransformerLM) => model.namedVariables().flatMap(([, v]) => Array.from(v.dataSync()));
    const a = after(whole);
    const b = after(chunked);
    expect(Math.max(...a.map((x, i) => Math.abs(x - b[i])))).toBeLessThan(1e-5);
    whole.dispose();
    chunked.dispose();
  });

  it('runs the frozen reference once a step, whatever the epochs, and measures KL against it', () => {
    const actor = new TransformerLM(config, 11);
    const reference = new TransformerLM(config, 11);
    const groups = trajectories(actor, 8, new Rng(5));
    const forward = jest.spyOn(reference, 'forward');
    const learner = { ...learnerWith(actor), reference };
    // 3 epochs of 2 minibatches: 6 optimiser steps, one reference pass over all 8 rows (one chunk).
    const metrics = updatePolicy(learner, groups, { ...grpo, klCoef: 0.001, epochs: 3, miniBatchSize: 4 }, 1, new Rng(6));
    expect(metrics['update/optimiser_steps']).toBe(6);
    expect(forward).toHaveBeenCalledTimes(1);
    // The actor moved off the reference it started equal to (k1 on the sampled tokens, which can
    // take either sign; 0 while they are equal).
    expect(Math.abs(metrics['kl/ref'])).toBeGreaterThan(1e-4);
    forward.mockRestore();
    actor.dispose();
    reference.dispose();
  });
});

describe('AEPO in the update', () => {
  beforeAll(useTestBackend);
  const after = (model: TransformerLM) => model.namedVariables().flatMap(([, v]) => Array.from(v.dataSync()));

  it("clipMode 'aepo' changes nothing until a token is clipped, then keeps its gradient", () => {
    const models = [1, 2, 3, 4].map(() => new TransformerLM(config, 5));
    const groups = trajectories(models[0], 8, new Rng(1));
    const run = (model: TransformerLM, clipMode: 'ppo' | 'aepo', miniBatchSize: number) =>
      updatePolicy(learnerWith(model), groups, { ...grpo, clipMode, miniBatchSize }, 1, new Rng(2));
    // One minibatch: the ratio is 1 everywhere, so the two losses have the same gradient.
    run(models[0], 'ppo', 8);
    run(models[1], 'aepo', 8);
    const [a, b] = [after(models[0]), after(models[1])];
    expect(Math.max(...a.map((x, i) => Math.abs(x - b[i])))).toBeLessThan(1e-6);
    // Two minibatches: the second clips tokens (see above), which only AEPO still trains on.
    const ppo = run(models[2], 'ppo', 4);
    const aepo = run(models[3], 'aepo', 4);
    expect(ppo['clip/fraction_high']).toBeGreaterThan(0);
    expect(aepo['clip/fraction_high']).toBeCloseTo(ppo['clip/fraction_high'], 6); // same forward pass
    const [c, d] = [after(models[2]), after(models[3])];
    expect(Math.max(...c.map((x, i) => Math.abs(x - d[i])))).toBeGreaterThan(1e-5);
    models.forEach((m) => m.dispose());
  });

  it('entropy-aware advantages: the policy loss at ratio 1 is −mean A·(1 + α·Ĥ) over the tokens', () => {
    const actor = new TransformerLM(config, 7);
    const groups = trajectories(actor, 8, new Rng(5));
    // The expectation from the actor's own entropies and the GRPO advantages, before the update.
    const turns = groups.flat().map((t) => ({ context: t.turns[0].context, response: t.turns[0].response.tokens }));
    const batch = new PackedBatch(turns.map(turnRow));
    const entropy = tf.tidy(() => tokenEntropy(actor.forward(batch.inputTensor()).logits, 1));
    const entropies = batch.gatherResponse(entropy);
    entropy.dispose();
    const advantages = groupZScores(groups.map((g) => g.map((t) => t.return))).flat().map((a) => [a, a, a]);
    const shaped = entropyShapedAdvantages(advantages, entropies, 0.3).flat();
    const expected = -shaped.reduce((sum, a) => sum + a, 0) / shaped.length;
    // Budget of one row: the standardisation is still the minibatch's, not each chunk's.
    const metrics = updatePolicy(learnerWith(actor), groups, { ...grpo, entropyAdvantageAlpha: 0.3, miniBatchSize: 8 }, 1, new Rng(6), actor.activationFloats(1, 8, true));
    expect(Math.abs(expected)).toBeGreaterThan(1e-3); // plain GRPO's is 0: the ±1 advantages cancel
    expect(metrics['loss/policy']).toBeCloseTo(expected, 5);
    actor.dispose();
  });
});

describe('GiGPO in the update', () => {
  it("puts each turn's A^E + ω·A^S on that turn's tokens", () => {
    // Two-turn episodes packed into one row each: turn 0 has 2 response tokens, turn 1 has 1.
    // Returns 0.9 and −0.2, turn rewards [−0.1, 1] and [−0.1, −0.1], first observations shared:
    // with γ = 0.5, ω = 1, 'mean' the advantages are [0.55 + 0.275, 0.55] and [−0.55 − 0.275, −0.55]
    // (see gigpo.spec.ts).
    const episode = (sample: number, rewards: number[], second: string) => {
      const first = { context: [1, 2], response: [5, 6] };
      const next = { context: [1, 2, 5, 6, 7 + sample], response: [9] };
      const turns = [
        { observation: 'A', context: first.context, response: { tokens: first.response, logProbs: [0, 0], entropies: [] }, reward: rewards[0] },
        { observation: second, context: next.context, response: { tokens: next.response, logProbs: [0], entropies: [] }, reward: rewards[1] },
      ];
      return { group: 0, sample, seed: 0, turns, return: rewards[0] + rewards[1] } as unknown as Trajectory;
    };
    const group = [episode(0, [-0.1, 1], 'B'), episode(1, [-0.1, -0.1], 'C')];
    const rows = buildRows(group);
    expect(rows.map((r) => r.turnLengths)).toEqual([[2, 1], [2, 1]]);
    const anchored = assignGigpo(rows, [group], { ...grpo, advantage: 'gigpo', gigpoGamma: 0.5, gigpoStepWeight: 1, gigpoNormalization: 'mean' });
    expect(anchored).toBeCloseTo(2 / 4, 12); // both first turns share A; B and C are alone
    const expected = [
      [0.55 + 0.275, 0.55 + 0.275, 0.55],
      [-0.55 - 0.275, -0.55 - 0.275, -0.55],
    ];
    rows.forEach((row, i) => row.advantages.forEach((a, t) => expect(a).toBeCloseTo(expected[i][t], 10)));
  });
});

describe('the world-model loss', () => {
  beforeAll(useTestBackend);

  it('is the mean cross-entropy of the feedback tokens between responses, and falls as it trains', () => {
    const actor = new TransformerLM(config, 11);
    // Two-turn episodes: context, response, feedback [f1, f2], response.
    const episodes = Array.from({ length: 4 }, (_, i) => {
      const first = { context: [1, 2 + (i % 3)], response: [5, 6] };
      const second = { context: [...first.context, ...first.response, 7 + (i % 2), 9], response: [10] };
      return [first, second];
    });
    const group = episodes.map((turns, i) => {
      const made = turns.map((t) => ({ context: t.context, response: { tokens: t.response, logProbs: t.response.map(() => Math.log(1 / VOCAB)), entropies: [], stopped: true }, reward: 0 }));
      return { group: 0, sample: i, seed: 0, turns: made, return: i % 2, success: false } as unknown as Trajectory;
    });
    // The expected loss: −mean log p(feedback token) under the actor before the update.
    const rows = episodes.map((turns) => ({ tokens: [...turns[1].context, ...turns[1].response], responseIndex: [4, 5] }));
    const batch = new PackedBatch(rows);
    const logProbs = tf.tidy(() => tokenLogProbs(actor.forward(batch.inputTensor()).logits, batch.targetOneHot(VOCAB), 1).arraySync() as number[][]);
    // Feedback tokens sit at indices 4 and 5 of each row (after the first response), predicted at positions 3 and 4.
    const expected = -rows.reduce((sum, _, b) => sum + logProbs[b][3] + logProbs[b][4], 0) / (rows.length * 2);
    const learner = learnerWith(actor);
    const cfg = { ...grpo, worldModelCoef: 1, miniBatchSize: 4 };
    const first = updatePolicy(learner, [group], cfg, 1, new Rng(1));
    expect(first['loss/world_model']).toBeCloseTo(expected, 4);
    let last = first['loss/world_model'];
    for (let i = 0; i < 5; i++) last = updatePolicy(learner, [group], cfg, 1, new Rng(1))['loss/world_model'];
    expect(last).toBeLessThan(first['loss/world_model']);
    actor.dispose();
  });
});

describe('minibatches', () => {
  it('cuts trajectories into minibatches of miniBatchSize, the remainder last', () => {
    const sizes = (count: number, size: number) => minibatches(count, { miniBatchSize: size }, new Rng(1)).map((m) => m.length);
    expect(sizes(128, 32)).toEqual([32, 32, 32, 32]);
    expect(sizes(32, 32)).toEqual([32]);
    expect(sizes(100, 32)).toEqual([32, 32, 32, 4]);
    const all = minibatches(100, { miniBatchSize: 32 }, new Rng(1)).flat();
    expect(new Set(all).size).toBe(100);
  });

  it('splits into a count of nearly equal minibatches for jobs that give miniBatches', () => {
    const sizes = minibatches(10, { miniBatchSize: 32, miniBatches: 3 }, new Rng(1)).map((m) => m.length);
    expect(sizes).toEqual([3, 3, 4]);
  });
});

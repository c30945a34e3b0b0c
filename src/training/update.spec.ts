import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../test/support/tf';
import { tokenLogProbs } from './algorithms/losses';
import { ALGORITHM_PRESETS, AlgorithmConfig } from './algorithms/presets';
import { Adam } from './policy/adam';
import { PackedBatch, turnRow } from './policy/batch';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import type { Trajectory, Turn } from './rollout/engine';
import { Learner, updatePolicy } from './update';
import { minibatches } from './update-rows';

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

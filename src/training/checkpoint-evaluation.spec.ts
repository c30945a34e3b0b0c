import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestBackend } from '../../test/support/tf';
import { loadPolicyFromCheckpoint } from './checkpoint';
import { evaluateCheckpoint, playabilityProblems, shapeOfCheckpoint, shapeOfJob } from './checkpoint-evaluation';
import { contextsFor } from './episode-io';
import { getEnvDefinition } from './envs/registry';
import { evaluate } from './evaluate';
import { TransformerPolicy } from './policy/policy';
import { Rng } from './random';
import { parseJobSpec, parseStoredJobSpec } from './spec/validate';
import { Trainer } from './trainer';

const FIXTURES = join(__dirname, '../../test/fixtures');
// A FrozenLake checkpoint (step 2) and its job's spec: context 64, 16-token responses, sign history.
const bytes = new Uint8Array(readFileSync(join(FIXTURES, 'v1-frozenlake-step2.ckpt')));
const spec = parseStoredJobSpec(JSON.parse(readFileSync(join(FIXTURES, 'v1-frozenlake.spec.json'), 'utf8')));

describe('playabilityProblems', () => {
  it('reads the same shape from the checkpoint bytes as from its job’s spec', () => {
    expect(shapeOfCheckpoint(bytes)).toEqual({ tokens: shapeOfJob(spec).tokens, contextLength: 64 });
  });

  it('accepts the configs the checkpoint can read: the slippery variant, a 6×6 lake', () => {
    const shape = shapeOfJob(spec);
    expect(playabilityProblems(shape, spec.rollout, { id: 'frozenlake', config: { slippery: true } })).toEqual([]);
    // 6·6 cells + 5 newlines + <bos> <obs> <resp> = 44 ≤ 64 − 16.
    expect(playabilityProblems(shape, spec.rollout, { id: 'frozenlake', config: { size: 6 } })).toEqual([]);
  });

  it('refuses an observation the context cannot hold beside one response, with the numbers', () => {
    // 7·7 cells + 6 newlines + <bos> <obs> <resp> = 58 > 64 − 16 = 48.
    expect(playabilityProblems(shapeOfJob(spec), spec.rollout, { id: 'frozenlake', config: { size: 7 } }, 'body')).toEqual([
      { field: 'body.environment.config', message: "one frozenlake observation of this config takes 58 tokens with its markers; the checkpoint's context of 64 holds 48 beside a 16-token response" },
    ]);
  });

  it('refuses an environment whose symbols the vocabulary lacks, naming them', () => {
    const [problem] = playabilityProblems(shapeOfJob(spec), spec.rollout, { id: 'sokoban', config: {} });
    expect(problem.field).toBe('environment.id');
    expect(problem.message).toMatch(/^the checkpoint's vocabulary has no .*"#".*: it cannot read sokoban observations/);
  });

  it('refuses the numeric history when the checkpoint was trained with signs, and a config outside the schema', () => {
    expect(playabilityProblems(shapeOfJob(spec), { ...spec.rollout, historyFormat: 'ragen' }, { id: 'frozenlake', config: {} }).map((p) => p.field)).toEqual(['rollout.historyFormat']);
    expect(playabilityProblems(shapeOfJob(spec), spec.rollout, { id: 'frozenlake', config: { size: 99 } }, 'body')).toEqual([{ field: 'body.environment.config.size', message: 'must be <= 8' }]);
  });

  it('accepts the bandit’s unseen arm names: one vocabulary covers both variants', () => {
    const bandit = parseStoredJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s' } });
    expect(playabilityProblems(shapeOfJob(bandit), bandit.rollout, { id: 'bandit', config: { variant: 'alt' } })).toEqual([]);
  });
});

describe('evaluateCheckpoint', () => {
  beforeAll(useTestBackend);

  it('with k = 1 plays exactly the trainer’s evaluation: same seeds, same sampling stream', async () => {
    const request = { environment: { id: 'frozenlake', config: { slippery: true } }, episodes: 6, k: 1, temperature: 1, seed: 11 };
    const result = await evaluateCheckpoint(bytes, spec.rollout, request);

    const { model, tokenizer } = loadPolicyFromCheckpoint(bytes);
    const policy = new TransformerPolicy(model, tokenizer, new Rng(11, 4));
    const reference = await evaluate(policy, getEnvDefinition('frozenlake'), { size: 4, frozenProb: 0.8, slippery: true }, { ...spec.rollout, temperature: 1 }, tokenizer, contextsFor(tokenizer, spec), 6);
    model.dispose();
    expect(result).toMatchObject({ step: 2, episodes: 6, k: 1, temperature: 1, success: reference.success, meanReturn: reference.meanReturn, formatValid: reference.formatValid });
    expect(result.passAtK).toBe(result.success);
    expect(result.samples).toHaveLength(2);
    expect(result.samples[0]).toMatch(/^--- turn 1 ---\n/);
  });

  it('counts a seed for pass@k when any of its k samples succeeds; greedy samples are all alike', async () => {
    // A bandit policy after a format warm-up only: it names an arm at random-ish, well-formed.
    const bandit = parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s-grpo' }, model: { config: { layers: 1, dModel: 16, contextLength: 40 } }, rollout: { groups: 2, groupSize: 4, maxTokensPerTurn: 12 }, training: { steps: 1, evalEvery: 0, evalEpisodes: 8, checkpointEvery: 1, warmup: { steps: 60, batchSize: 16 } } });
    const trainer = await Trainer.create(bandit, { backend: 'wasm' });
    let checkpoint: Uint8Array | null = null;
    await trainer.run({ onCheckpoint: (step, saved) => void (step === 0 && (checkpoint = saved)) });
    trainer.dispose();
    const sampled = await evaluateCheckpoint(checkpoint!, bandit.rollout, { environment: { id: 'bandit', config: {} }, episodes: 16, k: 4, temperature: 1, seed: 5 });
    expect(sampled.success).toBeGreaterThan(0);
    // Four tries per seed solve more seeds than one try does on average, and never more than
    // every sample's success counted on a seed of its own.
    expect(sampled.passAtK).toBeGreaterThan(sampled.success);
    expect(sampled.passAtK).toBeLessThanOrEqual(Math.min(1, 4 * sampled.success));
    const greedy = await evaluateCheckpoint(checkpoint!, bandit.rollout, { environment: { id: 'bandit', config: {} }, episodes: 16, k: 3, temperature: 0, seed: 5 });
    expect(greedy.passAtK).toBe(greedy.success);
  }, 60_000);

  it('is deterministic, leaves no tensor behind, and refuses what it cannot play', async () => {
    const request = { environment: { id: 'frozenlake', config: {} }, episodes: 4, k: 2, temperature: 0.5, seed: 1 };
    const before = tf.memory().numTensors;
    const first = await evaluateCheckpoint(bytes, spec.rollout, request);
    expect(tf.memory().numTensors).toBe(before);
    expect(await evaluateCheckpoint(bytes, spec.rollout, request)).toEqual(first);
    await expect(evaluateCheckpoint(bytes, spec.rollout, { ...request, environment: { id: 'sokoban', config: {} } })).rejects.toThrow(/vocabulary has no/);
  });
});

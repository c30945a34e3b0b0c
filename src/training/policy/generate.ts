import type * as tf from '@tensorflow/tfjs';
import { Rng } from '../random';
import { sampleToken } from './sampling';
import { KvCache, TransformerLM, disposeCache } from './transformer';

export interface GenerationOptions {
  temperature: number;
  maxNewTokens: number;
  eosId: number;
  rng: Rng;
}

/** A generated continuation: tokens (ending with EOS when the model stopped by itself). */
export interface Generation {
  tokens: number[];
  logProbs: number[];
  entropies: number[];
  /** False when the token budget ran out before EOS. */
  stopped: boolean;
}

/** Rows fall out of the batch once finished; the cache is compacted when half of it is dead. */
const COMPACT_BELOW = 0.5;

/**
 * Batched incremental decoding with a KV cache: one prefill over the left-padded prompts, then
 * one decode step per token for the rows still running. Tokens are drawn in JavaScript from the
 * shared `rng`, row by row in order, so generation is deterministic per seed and backend.
 */
export function generate(model: TransformerLM, prompts: readonly (readonly number[])[], options: GenerationOptions): Generation[] {
  if (prompts.length === 0) return [];
  return decode(model, model.prefill(prompts), options);
}

/**
 * The decoding loop of `generate` from a prompt already fed to the model: the logits for each
 * row's first new token and the cache of its prompt (from `prefill`, or `extend` of an earlier
 * turn's cache). The cache is consumed.
 */
export function decode(model: TransformerLM, start: { logits: tf.Tensor2D; cache: KvCache }, options: GenerationOptions): Generation[] {
  const count = start.logits.shape[0];
  const results: Generation[] = Array.from({ length: count }, () => ({ tokens: [], logProbs: [], entropies: [], stopped: false }));
  const V = model.config.vocabSize;
  let { logits, cache } = start;
  /** rows[i] = index into the batch of cache row i. */
  let rows = results.map((_, i) => i);
  for (let step = 0; ; step++) {
    const values = logits.dataSync() as Float32Array;
    logits.dispose();
    const fed: number[] = [];
    const alive: number[] = [];
    rows.forEach((promptIndex, row) => {
      const result = results[promptIndex];
      if (result.stopped || result.tokens.length >= options.maxNewTokens) {
        fed.push(options.eosId);
        return;
      }
      const drawn = sampleToken(values, row * V, V, options.temperature, options.rng);
      result.tokens.push(drawn.token);
      result.logProbs.push(drawn.logProb);
      result.entropies.push(drawn.entropy);
      if (drawn.token === options.eosId) result.stopped = true;
      fed.push(drawn.token);
      if (!result.stopped && result.tokens.length < options.maxNewTokens) alive.push(row);
    });
    if (alive.length === 0) break;
    if (alive.length < rows.length * COMPACT_BELOW) {
      cache = model.selectRows(cache, alive);
      rows = alive.map((row) => rows[row]);
      const kept = alive.map((row) => fed[row]);
      ({ logits, cache } = model.decodeStep(cache, kept));
    } else {
      ({ logits, cache } = model.decodeStep(cache, fed));
    }
  }
  disposeCache(cache);
  return results;
}

import { Rng } from '../random';
import { sampleToken } from './sampling';
import { TransformerLM, disposeCache } from './transformer';

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
  const results: Generation[] = prompts.map(() => ({ tokens: [], logProbs: [], entropies: [], stopped: false }));
  if (prompts.length === 0) return results;
  const V = model.config.vocabSize;
  let { logits, cache } = model.prefill(prompts);
  /** rows[i] = index into `prompts` of cache row i. */
  let rows = prompts.map((_, i) => i);
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

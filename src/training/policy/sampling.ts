import { Rng } from '../random';

/** One drawn token with its log-probability and the entropy of the distribution it came from. */
export interface SampledToken {
  token: number;
  logProb: number;
  entropy: number;
}

/**
 * Draws a token from softmax(logits / temperature). temperature = 0 is greedy decoding; the
 * reported log-prob and entropy are then those of the temperature-1 distribution.
 * Computed in float64 so that log-probs of very unlikely tokens stay finite.
 */
export function sampleToken(logits: Float32Array, offset: number, vocabSize: number, temperature: number, rng: Rng): SampledToken {
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let i = 0; i < vocabSize; i++) max = Math.max(max, logits[offset + i] / t);
  const exps = new Float64Array(vocabSize);
  let total = 0;
  for (let i = 0; i < vocabSize; i++) {
    exps[i] = Math.exp(logits[offset + i] / t - max);
    total += exps[i];
  }
  const logTotal = Math.log(total);
  let entropy = 0;
  for (let i = 0; i < vocabSize; i++) {
    if (exps[i] > 0) {
      const p = exps[i] / total;
      entropy -= p * (logits[offset + i] / t - max - logTotal);
    }
  }
  let token = 0;
  if (temperature > 0) {
    token = rng.categorical(exps);
  } else {
    for (let i = 1; i < vocabSize; i++) if (logits[offset + i] > logits[offset + token]) token = i;
  }
  return { token, logProb: logits[offset + token] / t - max - logTotal, entropy };
}

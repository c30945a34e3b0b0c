import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../../test/support/tf';
import { Rng } from '../random';
import { TransformerPolicy } from './policy';
import { Tokenizer } from './tokenizer';
import { TransformerLM } from './transformer';

describe('TransformerPolicy', () => {
  beforeAll(useTestBackend);

  it("feeds a prompt that extends the previous call's only its new tokens, with the same answers as from scratch", () => {
    const tokenizer = new Tokenizer(['a', 'b', 'c'], ['Up', 'Down']);
    const model = new TransformerLM({ vocabSize: tokenizer.size, contextLength: 64, layers: 2, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true }, 4, tokenizer.forbiddenIds);
    const rng = new Rng(3);
    const word = () => 12 + rng.int(tokenizer.size - 12);
    const turnOne = Array.from({ length: 5 }, (_, i) => [1, ...Array.from({ length: 3 + i }, word)]);
    const before = tf.memory().numTensors;
    const cached = new TransformerPolicy(model, tokenizer, new Rng(1));
    const first = cached.respond(turnOne, 0, 6);
    // The next turn: each prompt, its answer, and a few new observation tokens.
    const turnTwo = turnOne.map((prompt, i) => [...prompt, ...first[i].tokens, ...Array.from({ length: 2 + (i % 3) }, word)]);
    const second = cached.respond(turnTwo, 0, 6);
    cached.release();
    expect(tf.memory().numTensors).toBe(before);
    const fresh = new TransformerPolicy(model, tokenizer, new Rng(1)).respond(turnTwo, 0, 6);
    second.forEach((g, i) => {
      expect(g.tokens).toEqual(fresh[i].tokens);
      g.logProbs.forEach((lp, j) => expect(lp).toBeCloseTo(fresh[i].logProbs[j], 4));
    });
    model.dispose();
  });
});

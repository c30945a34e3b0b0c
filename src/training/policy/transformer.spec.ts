import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../../test/support/tf';
import { Rng } from '../random';
import { generate } from './generate';
import { TransformerLM, disposeCache, ropeTables, rotate } from './transformer';

const baseConfig = { vocabSize: 23, contextLength: 48, layers: 2, dModel: 32, heads: 4, ffnMultiplier: 4, rope: true };

// The cache paths (prefill, decode, extend, copied rows) must carry the previous token across
// their boundaries when the input holds it (tokenShift), and the tied head must read the same table.
describe.each([
  ['learned head', {}],
  ['token shift, tied embeddings', { tokenShift: true, tiedEmbeddings: true }],
])('TransformerLM (%s)', (_variant, extra) => {
  const config = { ...baseConfig, ...extra };
  let model: TransformerLM;
  beforeAll(async () => {
    await useTestBackend();
    model = new TransformerLM(config, 7, [0]);
  });
  afterAll(() => model.dispose());

  function randomPrompt(rng: Rng, length: number): number[] {
    return Array.from({ length }, () => 1 + rng.int(config.vocabSize - 1));
  }

  it('gives the same logits from the KV cache as from a full forward pass (within 1e-4)', () => {
    const rng = new Rng(3);
    const prompts = [randomPrompt(rng, 5), randomPrompt(rng, 12), randomPrompt(rng, 1)];
    const continuation = prompts.map(() => randomPrompt(rng, 6));
    const cachedLogits: Float32Array[][] = prompts.map(() => []);
    let { logits, cache } = model.prefill(prompts);
    for (let t = 0; t <= 6; t++) {
      const rows = logits.arraySync();
      rows.forEach((row, b) => cachedLogits[b].push(Float32Array.from(row)));
      logits.dispose();
      if (t === 6) break;
      ({ logits, cache } = model.decodeStep(cache, continuation.map((c) => c[t])));
    }
    tf.dispose([...cache.keys, ...cache.values, cache.keyMask]);

    prompts.forEach((prompt, b) => {
      const sequence = [...prompt, ...continuation[b]];
      const full = tf.tidy(() => model.forward(tf.tensor2d([sequence], [1, sequence.length], 'int32')).logits.arraySync()[0]);
      for (let t = 0; t <= 6; t++) {
        const expected = full[prompt.length - 1 + t];
        expect(cachedLogits[b][t].length).toBe(config.vocabSize);
        let maxDiff = 0;
        for (let v = 1; v < config.vocabSize; v++) maxDiff = Math.max(maxDiff, Math.abs(cachedLogits[b][t][v] - expected[v]));
        expect(maxDiff).toBeLessThan(1e-4);
      }
    });
  });

  it('never emits a forbidden token and keeps the tensor count flat across generations', () => {
    const rng = new Rng(11);
    const prompts = Array.from({ length: 8 }, (_, i) => randomPrompt(rng, 3 + i));
    const options = { temperature: 1, maxNewTokens: 10, eosId: 2, rng };
    generate(model, prompts, options);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) {
      const out = generate(model, prompts, options);
      for (const g of out) {
        expect(g.tokens).not.toContain(0);
        expect(g.tokens.length).toBe(g.logProbs.length);
        expect(g.stopped || g.tokens.length === 10).toBe(true);
      }
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  it('does per-token work independent of the history except in attention', async () => {
    // Profile one decode step after a short and after a long history: every kernel must be the
    // same and have the same output shape, except the attention kernels that read the S keys.
    const profileStep = async (historyLength: number) => {
      const rng = new Rng(5);
      const { logits, cache } = model.prefill([randomPrompt(rng, historyLength), randomPrompt(rng, historyLength)]);
      logits.dispose();
      let step!: ReturnType<TransformerLM['decodeStep']>;
      const profile = await tf.profile(() => {
        step = model.decodeStep(cache, [1, 2]);
        return step.logits;
      });
      step.logits.dispose();
      tf.dispose([...step.cache.keys, ...step.cache.values, step.cache.keyMask]);
      return profile.kernels.map((k) => ({ name: k.name, shape: (k.outputShapes[0] ?? []).join('x') }));
    };
    const short = await profileStep(4);
    const long = await profileStep(40);
    expect(long.map((k) => k.name)).toEqual(short.map((k) => k.name));
    const grown = long.filter((k, i) => k.shape !== short[i].shape);
    // Per layer: key concat, value concat, scores matmul, scale, bias add, softmax (with its
    // max/sub/exp/sum pieces), mask concat — nothing in the projections or the feed-forward.
    // ('unnamed scope' is the custom-gradient wrapper of the attention matMul, see policy/ops.ts;
    // no Transpose: cached keys are stored already transposed.)
    const allowed = new Set(['Concat', 'BatchMatMul', 'unnamed scope', 'Multiply', 'Add', 'Softmax', 'Reshape', 'Sub']);
    expect(grown.length).toBeGreaterThan(0);
    for (const kernel of grown) expect(allowed.has(kernel.name)).toBe(true);
    // Projections and the feed-forward run on one new token per row whatever the history.
    const unchangedMatMuls = long.filter((k, i) => k.name === 'BatchMatMul' && k.shape === short[i].shape);
    expect(unchangedMatMuls.length).toBeGreaterThanOrEqual(config.layers * 4);
  });

  it('extends a cache by new tokens per row with the logits a full prefill of the longer prompt gives (within 1e-4)', () => {
    const rng = new Rng(21);
    const first = [randomPrompt(rng, 4), randomPrompt(rng, 9), randomPrompt(rng, 6)];
    const more = [randomPrompt(rng, 5), randomPrompt(rng, 1), randomPrompt(rng, 3)];
    const before = tf.memory().numTensors;
    const fed = model.prefill(first);
    fed.logits.dispose();
    // Rows copied out of the batch in another order, as the next turn takes the episodes still running.
    const order = [2, 0, 1];
    const batch = model.copyRows(fed.cache, order);
    disposeCache(fed.cache);
    const extended = model.extend(batch, order.map((b) => more[b]));
    const reordered = <T>(xs: T[]) => order.map((b) => xs[b]);
    first.splice(0, 3, ...reordered(first));
    more.splice(0, 3, ...reordered(more));
    expect(extended.cache.nextPosition).toEqual(first.map((p, b) => p.length + more[b].length));
    const viaCache = extended.logits.arraySync();
    const full = model.prefill(first.map((p, b) => [...p, ...more[b]]));
    const direct = full.logits.arraySync();
    for (let b = 0; b < first.length; b++) {
      const maxDiff = Math.max(...viaCache[b].slice(1).map((x, v) => Math.abs(x - direct[b][v + 1])));
      expect(maxDiff).toBeLessThan(1e-4);
    }
    // Decoding on from the extended cache equals decoding on from the full prefill.
    const next = model.decodeStep(extended.cache, [3, 4, 5]);
    const nextDirect = model.decodeStep(full.cache, [3, 4, 5]);
    const a = next.logits.arraySync();
    const c = nextDirect.logits.arraySync();
    for (let b = 0; b < first.length; b++) expect(Math.max(...a[b].slice(1).map((x, v) => Math.abs(x - c[b][v + 1])))).toBeLessThan(1e-4);
    tf.dispose([extended.logits, full.logits, next.logits, nextDirect.logits]);
    disposeCache(next.cache);
    disposeCache(nextDirect.cache);
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('rotary positions', () => {
  beforeAll(useTestBackend);

  it('rotate is x·cos + (−x₂, x₁)·sin, bit for bit the sliced form, and so is its gradient', () => {
    const [B, H, T, dh] = [2, 3, 5, 8];
    const tables = ropeTables(T, dh);
    const rng = new Rng(3);
    const x = tf.tensor4d(Array.from({ length: B * H * T * dh }, () => rng.normal()), [B, H, T, dh]);
    const dy = tf.tensor4d(Array.from({ length: B * H * T * dh }, () => rng.normal()), [B, H, T, dh]);
    const pick = (table: tf.Tensor2D) => tf.reshape(table, [1, 1, T, dh]) as tf.Tensor4D;
    const rotation = { cos: pick(tables.cos), sin: pick(tables.sin), halfTurn: tables.halfTurn, halfTurnBack: tables.halfTurnBack };
    // (x₁, x₂) → (x₁c − x₂s, x₂c + x₁s) with slices and a concat, the form it replaced.
    const sliced = (t: tf.Tensor4D) => {
      const half = (table: tf.Tensor4D) => tf.slice(table, [0, 0, 0, 0], [1, 1, T, dh / 2]);
      const [c, s] = [half(rotation.cos), half(rotation.sin)];
      const x1 = tf.slice(t, [0, 0, 0, 0], [B, H, T, dh / 2]);
      const x2 = tf.slice(t, [0, 0, 0, dh / 2], [B, H, T, dh / 2]);
      return tf.concat([tf.sub(tf.mul(x1, c), tf.mul(x2, s)), tf.add(tf.mul(x2, c), tf.mul(x1, s))], 3);
    };
    // Position 0 does not rotate; position 1 turns pair 0 by one radian.
    const out = rotate(x, rotation);
    const value = (t: tf.Tensor, ...index: number[]) => t.bufferSync().get(...index);
    expect(value(out, 0, 0, 0, 3)).toBe(value(x, 0, 0, 0, 3));
    expect(value(out, 0, 0, 1, 0)).toBeCloseTo(value(x, 0, 0, 1, 0) * Math.cos(1) - value(x, 0, 0, 1, 4) * Math.sin(1), 5);
    expect(Array.from(out.dataSync())).toEqual(Array.from(sliced(x).dataSync()));
    const gradOf = (f: (t: tf.Tensor4D) => tf.Tensor) => tf.grad((t) => tf.sum(tf.mul(f(t as tf.Tensor4D), dy)))(x);
    expect(Array.from(gradOf((t) => rotate(t, rotation)).dataSync())).toEqual(Array.from(gradOf(sliced).dataSync()));
    tf.dispose([x, dy, out, rotation.cos, rotation.sin, ...Object.values(tables)]);
  });
});

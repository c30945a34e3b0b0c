import * as tf from '@tensorflow/tfjs';
import { Rng } from '../random';
import { GRID_EXTENT, GridLayout, gridCoordinates } from './grid-positions';
import { matMul } from './ops';

/** Shape of the decoder-only transformer (GPT-2 style, pre-LayerNorm). */
export interface TransformerConfig {
  vocabSize: number;
  /** Maximum positions: prompt plus generated tokens. */
  contextLength: number;
  layers: number;
  dModel: number;
  heads: number;
  /** Hidden width of the feed-forward block as a multiple of dModel. */
  ffnMultiplier: number;
  /**
   * Rotary position embeddings on queries and keys (Su et al. 2021, RoFormer), on top of the
   * learned absolute ones: attention then also sees relative offsets, so "the cell below"
   * (offset +width+1 in a rendered grid) means the same thing at every position.
   */
  rope?: boolean;
  /**
   * Row and column embeddings added to the cells of rendered observations (grid-positions.ts):
   * where a cell sits in the grid, whatever the history before it. Needs the tokenizer's layout.
   */
  gridPositions?: boolean;
  /**
   * The output head reads the token embeddings (Press & Wolf 2017): logits = h · Eᵀ + b. A token
   * the attention copies out of the context then scores through the same vector it came in as,
   * so copying a name works for every name the embeddings hold, not only those the head has
   * learned one by one.
   */
  tiedEmbeddings?: boolean;
  /**
   * Each position's input also carries the previous token's embedding, from a table of its own
   * (a token shift, as in RWKV, or the short convolutions of H3 and Based before attention).
   * Recalling "the name after `mentor`" then needs one attention lookup on keys that already
   * hold the word before each name, instead of a previous-token head layer 1 has to learn first.
   */
  tokenShift?: boolean;
}

/** cos and sin of the rotation angles, each repeated over both halves: [B or 1, 1, T, dh]. */
export interface Rotation {
  cos: tf.Tensor4D;
  sin: tf.Tensor4D;
  /** [dh, dh]: x · halfTurn = (−x₂, x₁) for x = (x₁, x₂); its transpose is −halfTurn. */
  halfTurn: tf.Tensor2D;
  halfTurnBack: tf.Tensor2D;
}

export interface RopeTables {
  /** [positions, dh]. */
  cos: tf.Tensor2D;
  sin: tf.Tensor2D;
  halfTurn: tf.Tensor2D;
  halfTurnBack: tf.Tensor2D;
}

/** Keys and values of every layer for the tokens seen so far, one row per sequence. */
export interface KvCache {
  /** Per layer, transposed for q·kᵀ: [B, H, dh, S] (decoding appends along the last axis). */
  keys: tf.Tensor4D[];
  values: tf.Tensor4D[];
  /** 0 where a key is left padding, else 1: [B, S]. */
  keyMask: tf.Tensor2D;
  /** Position id the next token of each row will take. */
  nextPosition: number[];
  /** The last token of each row, the previous token of its next one (tokenShift). */
  lastToken: number[];
}

export type ForwardOutput = {
  logits: tf.Tensor3D; // [B, T, V]
  values: tf.Tensor2D; // [B, T]
};

const NEG_INF = -1e9;
const LN_EPS = 1e-5;

interface Layer {
  ln1Gamma: tf.Variable;
  ln1Beta: tf.Variable;
  wQkv: tf.Variable;
  bQkv: tf.Variable;
  wOut: tf.Variable;
  bOut: tf.Variable;
  ln2Gamma: tf.Variable;
  ln2Beta: tf.Variable;
  wFfn1: tf.Variable;
  bFfn1: tf.Variable;
  wFfn2: tf.Variable;
  bFfn2: tf.Variable;
}

/**
 * Autoregressive transformer language model with a scalar value head (the PPO critic reads the
 * same trunk shape). Written with raw ops rather than tf.layers so that generation can keep a
 * KV cache, and with one-hot × matMul instead of gather because the wasm backend has no gather
 * gradient (docs/training.md, "Backends").
 */
export class TransformerLM {
  readonly config: TransformerConfig;
  private readonly variables = new Map<string, tf.Variable>();
  private readonly tokenEmbedding: tf.Variable;
  private readonly positionEmbedding: tf.Variable;
  private readonly blocks: Layer[] = [];
  private readonly lnFinalGamma: tf.Variable;
  private readonly lnFinalBeta: tf.Variable;
  /** [d, V], or null when the head reads the token embeddings (tiedEmbeddings). */
  private readonly wLm: tf.Variable | null;
  private readonly bLm: tf.Variable;
  private readonly wValue: tf.Variable;
  private readonly bValue: tf.Variable;
  /** Added to the logits: NEG_INF on tokens the policy must never emit. */
  private readonly logitBias: tf.Tensor1D;
  /** RoPE tables ([contextLength, dh] and the half turn), or null without RoPE. */
  private readonly ropeTables: RopeTables | null;
  /** Grid-position embeddings [GRID_EXTENT, d] and the layout that finds the cells, or null. */
  private readonly grid: { layout: GridLayout; rows: tf.Variable; cols: tf.Variable } | null;
  /** Previous-token embeddings [V + 1, d] (row V: no previous token), or null without tokenShift. */
  private readonly shiftEmbedding: tf.Variable | null;

  constructor(config: TransformerConfig, seed: number, forbiddenTokenIds: readonly number[] = [], layout?: GridLayout) {
    if (config.dModel % config.heads !== 0) throw new Error('dModel must be divisible by heads');
    this.config = config;
    const rng = new Rng(seed, 0x7e1);
    const { vocabSize: V, contextLength: P, dModel: d, layers } = config;
    const ffn = d * config.ffnMultiplier;
    // GPT-2 initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2·layers).
    const residualStd = 0.02 / Math.sqrt(2 * layers);
    this.tokenEmbedding = this.normal('tok_emb', [V, d], 0.02, rng);
    this.positionEmbedding = this.normal('pos_emb', [P, d], 0.01, rng);
    for (let l = 0; l < layers; l++) {
      this.blocks.push({
        ln1Gamma: this.constant(`h${l}.ln1.g`, [d], 1),
        ln1Beta: this.constant(`h${l}.ln1.b`, [d], 0),
        wQkv: this.normal(`h${l}.attn.w_qkv`, [d, 3 * d], 0.02, rng),
        bQkv: this.constant(`h${l}.attn.b_qkv`, [3 * d], 0),
        wOut: this.normal(`h${l}.attn.w_out`, [d, d], residualStd, rng),
        bOut: this.constant(`h${l}.attn.b_out`, [d], 0),
        ln2Gamma: this.constant(`h${l}.ln2.g`, [d], 1),
        ln2Beta: this.constant(`h${l}.ln2.b`, [d], 0),
        wFfn1: this.normal(`h${l}.ffn.w1`, [d, ffn], 0.02, rng),
        bFfn1: this.constant(`h${l}.ffn.b1`, [ffn], 0),
        wFfn2: this.normal(`h${l}.ffn.w2`, [ffn, d], residualStd, rng),
        bFfn2: this.constant(`h${l}.ffn.b2`, [d], 0),
      });
    }
    this.lnFinalGamma = this.constant('ln_f.g', [d], 1);
    this.lnFinalBeta = this.constant('ln_f.b', [d], 0);
    this.wLm = config.tiedEmbeddings ? null : this.normal('lm_head.w', [d, V], 0.02, rng);
    this.bLm = this.constant('lm_head.b', [V], 0);
    this.wValue = this.normal('value_head.w', [d, 1], 0.02, rng);
    this.bValue = this.constant('value_head.b', [1], 0);
    const bias = new Float32Array(V);
    for (const id of forbiddenTokenIds) bias[id] = NEG_INF;
    this.logitBias = tf.tensor1d(bias);
    this.ropeTables = config.rope ? ropeTables(P, d / config.heads) : null;
    if (config.gridPositions && !layout) throw new Error('gridPositions needs the tokenizer layout');
    // Drawn last, so a model without them initialises exactly as before.
    this.grid = config.gridPositions ? { layout: layout!, rows: this.normal('grid_row_emb', [GRID_EXTENT, d], 0.01, rng), cols: this.normal('grid_col_emb', [GRID_EXTENT, d], 0.01, rng) } : null;
    this.shiftEmbedding = config.tokenShift ? this.normal('shift_emb', [V + 1, d], 0.02, rng) : null;
  }

  /** Trainable variables by stable name (checkpoint order). */
  namedVariables(): [string, tf.Variable][] {
    return [...this.variables.entries()];
  }

  trainableVariables(): tf.Variable[] {
    return [...this.variables.values()];
  }

  parameterCount(): number {
    return this.trainableVariables().reduce((n, v) => n + v.size, 0);
  }

  /**
   * Rough count of the floats a forward pass over `rows` rows of `length` tokens keeps alive
   * (twice that with gradients): per layer the residual-width tensors, the feed-forward hidden
   * layer and the H·T² attention scores, plus the vocabulary-wide logits. It only has to rank
   * chunk sizes, so the constants are generous rather than exact.
   */
  activationFloats(rows: number, length: number, withGradients: boolean): number {
    const { layers, dModel: d, heads, ffnMultiplier, vocabSize } = this.config;
    const perLayer = length * (20 * d + 2 * ffnMultiplier * d) + 3 * heads * length * length;
    const forward = rows * (layers * perLayer + 6 * length * vocabSize);
    return withGradients ? 2 * forward : forward;
  }

  /** `floats`, or `minRows` rows of the full context where those need more. */
  budgetFor(floats: number, minRows: number, withGradients: boolean): number {
    return Math.max(floats, minRows * this.activationFloats(1, this.config.contextLength, withGradients));
  }

  /** How many rows of `length` tokens one pass keeps within `budget` floats (at least one). */
  rowsWithin(budget: number, length: number, withGradients: boolean): number {
    return Math.max(1, Math.floor(budget / this.activationFloats(1, length, withGradients)));
  }

  /** Copies every weight from a model of the same shape (reference policy, critic init). */
  copyFrom(other: TransformerLM): void {
    const source = new Map(other.namedVariables());
    for (const [name, variable] of this.variables) {
      const value = source.get(name);
      if (!value) throw new Error(`missing weight ${name}`);
      variable.assign(value);
    }
  }

  dispose(): void {
    for (const v of this.variables.values()) v.dispose();
    this.logitBias.dispose();
    if (this.ropeTables) tf.dispose(Object.values(this.ropeTables));
  }

  /**
   * Full causal forward pass over right-padded rows that start at position 0.
   * tokens: [B, T] int32. Padding after a row's end only affects padded positions.
   */
  forward(tokens: tf.Tensor2D): ForwardOutput {
    return tf.tidy(() => {
      const [B, T] = tokens.shape;
      if (T > this.config.contextLength) throw new Error(`sequence of ${T} exceeds context ${this.config.contextLength}`);
      const positions = tf.slice(this.positionEmbedding, [0, 0], [T, this.config.dModel]);
      const ids = this.grid || this.shiftEmbedding ? tokens.dataSync() : [];
      let x = this.withShift(this.withGrid(tf.add(this.embed(tokens), positions) as tf.Tensor3D, ids, B, T), ids, B, T, null);
      const causal = causalBias(T); // [T, T]
      const rotation = this.ropeTables ? this.rotationFor(null, T) : null;
      for (const block of this.blocks) {
        x = this.block(block, x, rotation, (q) => {
          const { keys, values } = this.splitKv(block, q.normed, rotation);
          return { keys, values, bias: causal };
        });
      }
      return this.heads(x, B, T);
    });
  }

  /**
   * Runs the prompts (left-padded to a common length) and returns the cache plus the logits
   * for the first generated token. Position ids restart at 0 after each row's padding, so a row
   * sees exactly what `forward` would see for it alone.
   */
  prefill(prompts: readonly (readonly number[])[]): { logits: tf.Tensor2D; cache: KvCache } {
    const B = prompts.length;
    const L = Math.max(...prompts.map((p) => p.length));
    if (L + 1 > this.config.contextLength) throw new Error(`prompt of ${L} exceeds context ${this.config.contextLength}`);
    const ids = new Int32Array(B * L);
    const positionIds = new Int32Array(B * L);
    const mask = new Float32Array(B * L);
    prompts.forEach((prompt, b) => {
      const pad = L - prompt.length;
      prompt.forEach((token, i) => {
        ids[b * L + pad + i] = token;
        positionIds[b * L + pad + i] = i;
        mask[b * L + pad + i] = 1;
      });
    });
    const nextPosition = prompts.map((p) => p.length);
    let keys: tf.Tensor4D[] = [];
    let values: tf.Tensor4D[] = [];
    const keyMask = tf.tensor2d(mask, [B, L]);
    const logits = tf.tidy(() => {
      const tokens = tf.tensor2d(ids, [B, L], 'int32');
      const positions = tf.tensor2d(positionIds, [B, L], 'int32');
      let x = this.withShift(this.withGrid(tf.add(this.embed(tokens), this.embedPositions(positions)) as tf.Tensor3D, ids, B, L), ids, B, L, mask);
      // [B, 1, L, L]: causal and no attention to padding.
      const bias = tf.add(causalBias(L), paddingBias(keyMask)) as tf.Tensor4D;
      const rotation = this.ropeTables ? this.rotationFor(positions, L) : null;
      const collectedKeys: tf.Tensor4D[] = [];
      const collectedValues: tf.Tensor4D[] = [];
      for (const block of this.blocks) {
        const [next, k, v] = this.layerTidy(block, x, rotation, (normed) => ({ ...this.splitKv(block, normed, rotation), bias }));
        collectedKeys.push(k);
        collectedValues.push(v);
        x = next;
      }
      const last = tf.slice(x, [0, L - 1, 0], [B, 1, this.config.dModel]);
      const out = this.heads(last, B, 1);
      keys = collectedKeys.map((k) => tf.keep(k));
      values = collectedValues.map((v) => tf.keep(v));
      return tf.reshape(out.logits, [B, this.config.vocabSize]) as tf.Tensor2D;
    });
    return { logits, cache: { keys, values, keyMask, nextPosition, lastToken: prompts.map((p) => p[p.length - 1]) } };
  }

  /**
   * Feeds one token per row and returns the logits for the next one and the grown cache.
   * Every projection works on [B, 1, d]; only attention reads the S cached keys.
   * The input cache is disposed.
   */
  decodeStep(cache: KvCache, tokenIds: readonly number[]): { logits: tf.Tensor2D; cache: KvCache } {
    return this.extend(cache, tokenIds.map((token) => [token]));
  }

  /**
   * Feeds each row its own segment of new tokens (left-padded to a common length G) after the
   * cached ones, and returns the logits for the token after each segment and the grown cache:
   * a prefill that starts from a cache, so a multi-turn episode's next prompt costs its new
   * tokens (the last response and the environment's answer) instead of its whole history. New
   * token i of a row attends to the row's cached tokens and to its own segment up to i. The input
   * cache is disposed.
   */
  extend(cache: KvCache, segments: readonly (readonly number[])[]): { logits: tf.Tensor2D; cache: KvCache } {
    const B = segments.length;
    const G = Math.max(...segments.map((s) => s.length));
    if (segments.some((s) => s.length === 0)) throw new Error('extend: every row needs at least one new token');
    if (Math.max(...cache.nextPosition.map((p, b) => p + segments[b].length)) + 1 > this.config.contextLength) {
      throw new Error(`extended prompt exceeds context ${this.config.contextLength}`);
    }
    const ids = new Int32Array(B * G);
    const positionIds = new Int32Array(B * G);
    const mask = new Float32Array(B * G);
    segments.forEach((segment, b) => {
      const pad = G - segment.length;
      segment.forEach((token, i) => {
        ids[b * G + pad + i] = token;
        positionIds[b * G + pad + i] = cache.nextPosition[b] + i;
        mask[b * G + pad + i] = 1;
      });
    });
    const segmentMask = tf.tensor2d(mask, [B, G]);
    const keyMask = tf.tidy(() => tf.concat([cache.keyMask, segmentMask], 1) as tf.Tensor2D);
    const keys: tf.Tensor4D[] = [];
    const values: tf.Tensor4D[] = [];
    const logits = tf.tidy(() => {
      const tokens = tf.tensor2d(ids, [B, G], 'int32');
      const positions = tf.tensor2d(positionIds, [B, G], 'int32');
      let x = this.withShift(this.withGrid(tf.add(this.embed(tokens), this.embedPositions(positions)) as tf.Tensor3D, ids, B, G), ids, B, G, mask, cache.lastToken);
      // [B, 1, G, S + G]: every token that is not padding, and causal over the segment (one new
      // token per row, as in decoding, needs only the padding).
      const S = cache.keyMask.shape[1];
      const bias = G === 1 ? paddingBias(keyMask) : tf.add(paddingBias(keyMask), tf.concat([tf.zeros([G, S]), causalBias(G)], 1));
      const rotation = this.ropeTables ? this.rotationFor(positions, G) : null;
      this.blocks.forEach((block, l) => {
        const [next, k, v] = this.layerTidy(block, x, rotation, (normed) => {
          const kv = this.splitKv(block, normed, rotation);
          return { keys: tf.concat([cache.keys[l], kv.keys], 3) as tf.Tensor4D, values: tf.concat([cache.values[l], kv.values], 2) as tf.Tensor4D, bias };
        });
        keys.push(tf.keep(k));
        values.push(tf.keep(v));
        x = next;
      });
      const last = tf.slice(x, [0, G - 1, 0], [B, 1, this.config.dModel]);
      return tf.reshape(this.heads(last, B, 1).logits, [B, this.config.vocabSize]) as tf.Tensor2D;
    });
    segmentMask.dispose();
    disposeCache(cache);
    return { logits, cache: { keys, values, keyMask, nextPosition: cache.nextPosition.map((p, b) => p + segments[b].length), lastToken: segments.map((s) => s[s.length - 1]) } };
  }

  /** Keeps only the given rows of the cache (finished sequences leave the batch). Disposes the input. */
  selectRows(cache: KvCache, rows: readonly number[]): KvCache {
    const next = this.copyRows(cache, rows);
    disposeCache(cache);
    return next;
  }

  /** The given rows of a cache (in that order, repeats allowed) as a new cache; the input is kept. */
  copyRows(cache: KvCache, rows: readonly number[]): KvCache {
    const index = tf.tensor1d(Int32Array.from(rows), 'int32');
    const pick = <T extends tf.Tensor>(t: T): T => tf.gather(t, index, 0) as T;
    const next: KvCache = {
      keys: cache.keys.map(pick),
      values: cache.values.map(pick),
      keyMask: pick(cache.keyMask),
      nextPosition: rows.map((r) => cache.nextPosition[r]),
      lastToken: rows.map((r) => cache.lastToken[r]),
    };
    index.dispose();
    return next;
  }

  private embed(tokens: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = tokens.shape;
    const oneHot = tf.oneHot(tf.reshape(tokens, [B * T]) as tf.Tensor1D, this.config.vocabSize);
    return tf.reshape(matMul(oneHot, this.tokenEmbedding), [B, T, this.config.dModel]);
  }

  /** Rotation for positions 0..T−1 (positions null) or per row ([B, T] position ids). */
  private rotationFor(positions: tf.Tensor2D | null, T: number): Rotation {
    const { cos, sin, halfTurn, halfTurnBack } = this.ropeTables!;
    const width = cos.shape[1];
    if (!positions) {
      const pick = (table: tf.Tensor2D) => tf.reshape(tf.slice(table, [0, 0], [T, width]), [1, 1, T, width]) as tf.Tensor4D;
      return { cos: pick(cos), sin: pick(sin), halfTurn, halfTurnBack };
    }
    const B = positions.shape[0];
    const oneHot = tf.oneHot(tf.reshape(positions, [B * T]) as tf.Tensor1D, this.config.contextLength);
    const pick = (table: tf.Tensor2D) => tf.reshape(tf.matMul(oneHot, table), [B, 1, T, width]) as tf.Tensor4D;
    return { cos: pick(cos), sin: pick(sin), halfTurn, halfTurnBack };
  }

  private embedPositions(positions: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = positions.shape;
    const oneHot = tf.oneHot(tf.reshape(positions, [B * T]) as tf.Tensor1D, this.config.contextLength);
    return tf.reshape(matMul(oneHot, this.positionEmbedding), [B, T, this.config.dModel]);
  }

  /** x plus the row and column embeddings of each token of `ids` ([B, T], row-major), if the model has them. */
  private withGrid(x: tf.Tensor3D, ids: ArrayLike<number>, B: number, T: number): tf.Tensor3D {
    if (!this.grid) return x;
    const { rows, cols } = gridCoordinates(this.grid.layout, ids, B, T);
    const pick = (index: Int32Array, table: tf.Variable) => matMul(tf.oneHot(tf.tensor1d(index, 'int32'), GRID_EXTENT), table);
    return tf.add(x, tf.reshape(tf.add(pick(rows, this.grid.rows), pick(cols, this.grid.cols)), [B, T, this.config.dModel])) as tf.Tensor3D;
  }

  /**
   * Adds the previous token's embedding (tokenShift) to each of the B × T inputs `ids`: the token
   * to its left in the row, or for a row's first real token (mask 1 after padding, or column 0
   * without a mask) the row's `before` token (a cache's last one), else the "none" row V.
   */
  private withShift(x: tf.Tensor3D, ids: ArrayLike<number>, B: number, T: number, mask: ArrayLike<number> | null, before?: readonly number[]): tf.Tensor3D {
    if (!this.shiftEmbedding) return x;
    const V = this.config.vocabSize;
    const previous = new Int32Array(B * T).fill(V);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (mask && mask[i] === 0) continue;
        const first = t === 0 || (mask !== null && mask[i - 1] === 0);
        previous[i] = first ? (before?.[b] ?? V) : ids[i - 1];
      }
    }
    const shifted = matMul(tf.oneHot(tf.tensor1d(previous, 'int32'), V + 1), this.shiftEmbedding);
    return tf.add(x, tf.reshape(shifted, [B, T, this.config.dModel])) as tf.Tensor3D;
  }

  /**
   * One layer of a forward pass without gradients that keeps only its output and the keys and
   * values it attended to: its attention maps ([B, H, T, S] each) are freed before the next layer
   * instead of at the end of the pass, so a prefill's memory is one layer's maps, not every
   * layer's (the same operations, so the same numbers).
   */
  private layerTidy(
    block: Layer,
    x: tf.Tensor3D,
    rotation: Rotation | null,
    attendTo: (normed: tf.Tensor3D) => { keys: tf.Tensor4D; values: tf.Tensor4D; bias: tf.Tensor },
  ): [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D] {
    return tf.tidy(() => {
      let kv: { keys: tf.Tensor4D; values: tf.Tensor4D } | null = null;
      const out = this.block(block, x, rotation, (q) => (kv = attendTo(q.normed)));
      return [out, kv!.keys, kv!.values];
    }) as [tf.Tensor3D, tf.Tensor4D, tf.Tensor4D];
  }

  /** Pre-LN block: x + Attn(LN(x)); x + FFN(LN(x)). `attendTo` supplies keys, values, bias. */
  private block(
    block: Layer,
    x: tf.Tensor3D,
    rotation: Rotation | null,
    attendTo: (q: { normed: tf.Tensor3D }) => { keys: tf.Tensor4D; values: tf.Tensor4D; bias: tf.Tensor },
  ): tf.Tensor3D {
    const [B, T, d] = x.shape;
    const H = this.config.heads;
    const dh = d / H;
    const normed = layerNorm(x, block.ln1Gamma, block.ln1Beta);
    const query = this.project(normed, block.wQkv, block.bQkv, 0, d);
    const q = rotate(tf.transpose(tf.reshape(query, [B, T, H, dh]), [0, 2, 1, 3]) as tf.Tensor4D, rotation); // [B, H, T, dh]
    const { keys, values, bias } = attendTo({ normed });
    const scores = tf.add(tf.mul(matMul(q, keys), 1 / Math.sqrt(dh)), bias);
    const attended = matMul(tf.softmax(scores), values); // [B, H, T, dh]
    const merged = tf.reshape(tf.transpose(attended, [0, 2, 1, 3]), [B * T, d]);
    const attnOut = tf.add(matMul(merged, block.wOut), block.bOut);
    const h = tf.add(x, tf.reshape(attnOut, [B, T, d])) as tf.Tensor3D;
    const normed2 = tf.reshape(layerNorm(h, block.ln2Gamma, block.ln2Beta), [B * T, d]);
    const hidden = tf.relu(tf.add(matMul(normed2, block.wFfn1), block.bFfn1));
    const ffnOut = tf.add(matMul(hidden, block.wFfn2), block.bFfn2);
    return tf.add(h, tf.reshape(ffnOut, [B, T, d])) as tf.Tensor3D;
  }

  /**
   * Keys as [B, H, dh, T] (already transposed for q·kᵀ, which keeps the wasm matMul on its fast
   * path and lets the cache grow along its last axis) and values as [B, H, T, dh].
   */
  private splitKv(block: Layer, normed: tf.Tensor3D, rotation: Rotation | null): { keys: tf.Tensor4D; values: tf.Tensor4D } {
    const [B, T, d] = normed.shape;
    const H = this.config.heads;
    const split = (t: tf.Tensor2D) => tf.reshape(t, [B, T, H, d / H]);
    const keys = rotate(tf.transpose(split(this.project(normed, block.wQkv, block.bQkv, d, d)), [0, 2, 1, 3]) as tf.Tensor4D, rotation);
    return {
      keys: tf.transpose(keys, [0, 1, 3, 2]) as tf.Tensor4D,
      values: tf.transpose(split(this.project(normed, block.wQkv, block.bQkv, 2 * d, d)), [0, 2, 1, 3]) as tf.Tensor4D,
    };
  }

  /** Columns [offset, offset+width) of the fused qkv projection. */
  private project(normed: tf.Tensor3D, w: tf.Variable, b: tf.Variable, offset: number, width: number): tf.Tensor2D {
    const [B, T, d] = normed.shape;
    const wPart = tf.slice(w, [0, offset], [d, width]);
    const bPart = tf.slice(b, [offset], [width]);
    return tf.add(matMul(tf.reshape(normed, [B * T, d]), wPart), bPart) as tf.Tensor2D;
  }

  private heads(x: tf.Tensor3D, B: number, T: number): ForwardOutput {
    const d = this.config.dModel;
    const h = tf.reshape(layerNorm(x, this.lnFinalGamma, this.lnFinalBeta), [B * T, d]);
    const head = this.wLm ?? tf.transpose(this.tokenEmbedding);
    const logits = tf.add(tf.add(matMul(h, head), this.bLm), this.logitBias);
    const values = tf.add(matMul(h, this.wValue), this.bValue);
    return {
      logits: tf.reshape(logits, [B, T, this.config.vocabSize]) as tf.Tensor3D,
      values: tf.reshape(values, [B, T]) as tf.Tensor2D,
    };
  }

  private normal(name: string, shape: number[], std: number, rng: Rng): tf.Variable {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = rng.normal() * std;
    return this.register(name, tf.tensor(data, shape));
  }

  private constant(name: string, shape: number[], value: number): tf.Variable {
    return this.register(name, tf.fill(shape, value));
  }

  private register(name: string, initial: tf.Tensor): tf.Variable {
    const variable = tf.variable(initial, true);
    initial.dispose();
    this.variables.set(name, variable);
    return variable;
  }
}

export function disposeCache(cache: KvCache): void {
  tf.dispose([...cache.keys, ...cache.values, cache.keyMask]);
}

/**
 * RoPE angle tables: θ_{p,i} = p · 10000^(−2i/dh) for i < dh/2, each table repeated over both
 * halves of the head, and the half-turn matrix that `rotate` multiplies by.
 */
export function ropeTables(positions: number, headDim: number): RopeTables {
  const half = headDim / 2;
  const cos = new Float32Array(positions * headDim);
  const sin = new Float32Array(positions * headDim);
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * 10000 ** (-(2 * i) / headDim);
      cos[p * headDim + i] = cos[p * headDim + half + i] = Math.cos(angle);
      sin[p * headDim + i] = sin[p * headDim + half + i] = Math.sin(angle);
    }
  }
  const halfTurn = new Float32Array(headDim * headDim);
  for (let i = 0; i < half; i++) {
    halfTurn[(half + i) * headDim + i] = -1; // column i of the product: −x₂ᵢ
    halfTurn[i * headDim + half + i] = 1; // column half + i: x₁ᵢ
  }
  return {
    cos: tf.tensor2d(cos, [positions, headDim]),
    sin: tf.tensor2d(sin, [positions, headDim]),
    halfTurn: tf.tensor2d(halfTurn, [headDim, headDim]),
    halfTurnBack: tf.tensor2d(halfTurn.map((v) => -v), [headDim, headDim]),
  };
}

/**
 * Rotates each (x_i, x_{i+dh/2}) pair of the last axis by its angle ("rotate half" form):
 * x·cos + (−x₂, x₁)·sin. The half turn is a product with a ±1 permutation matrix rather than
 * slices and a concat along the last axis: every output is one term plus zeros, so it is exact,
 * and the wasm backend's strided slice, concat and split kernels were a fifth of an update's
 * kernel time at the largest shape (docs/training-speed.md). It computes exactly what the sliced
 * form did, bit for bit: x₁c − x₂s = x₁c + (−x₂)s in floating point.
 */
export function rotate(x: tf.Tensor4D, rotation: Rotation | null): tf.Tensor4D {
  if (!rotation) return x;
  const [B, H, T, dh] = x.shape;
  const turned = tf.reshape(turnHalf(tf.reshape(x, [B * H * T, dh]), rotation.halfTurn, rotation.halfTurnBack), [B, H, T, dh]);
  return tf.add(tf.mul(x, rotation.cos), tf.mul(turned, rotation.sin)) as tf.Tensor4D;
}

/**
 * x · turn, whose gradient is dy · turnᵀ = dy · back (back = −turn, passed in): plain products
 * both ways, which the native kernels run (tfjs's own gradient would multiply by a transpose,
 * which goes to the slower wasm kernel). The tables are constants: their gradients are zeros.
 */
const turnHalf = tf.customGrad(((x: tf.Tensor, turn: tf.Tensor, back: tf.Tensor, save: tf.GradSaveFunc) => {
  save([back]);
  return {
    value: tf.matMul(x as tf.Tensor2D, turn as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor, [savedBack]: tf.Tensor[]) => [tf.matMul(dy as tf.Tensor2D, savedBack as tf.Tensor2D), tf.zerosLike(savedBack), tf.zerosLike(savedBack)],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (x: tf.Tensor2D, turn: tf.Tensor2D, back: tf.Tensor2D) => tf.Tensor2D;

function layerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor): tf.Tensor3D {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, LN_EPS))), gamma), beta) as tf.Tensor3D;
}

/** [T, T] additive mask: 0 on and below the diagonal, NEG_INF above. */
function causalBias(T: number): tf.Tensor2D {
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) data[i * T + j] = NEG_INF;
  return tf.tensor2d(data, [T, T]);
}

/** [B, 1, 1, S] additive mask from a 0/1 key mask. */
function paddingBias(keyMask: tf.Tensor2D): tf.Tensor4D {
  const [B, S] = keyMask.shape;
  return tf.reshape(tf.mul(tf.sub(1, keyMask), NEG_INF), [B, 1, 1, S]);
}

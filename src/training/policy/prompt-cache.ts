import { KvCache, TransformerLM, disposeCache } from './transformer';

/** A batch of prompts fed together, and a copy of its cache. */
interface Batch {
  cache: KvCache;
}

/** One cached prompt: its tokens and where its keys and values are. */
export interface CachedPrompt {
  tokens: readonly number[];
  batch: Batch;
  row: number;
}

/** FNV-1a over token ids, one value per prefix length: prefix[n] hashes tokens[0..n). */
function prefixHashes(tokens: readonly number[]): Uint32Array {
  const hashes = new Uint32Array(tokens.length + 1);
  let h = 0x811c9dc5;
  hashes[0] = h;
  for (let i = 0; i < tokens.length; i++) {
    h = Math.imul(h ^ (tokens[i] + 1), 0x01000193) >>> 0;
    hashes[i + 1] = h;
  }
  return hashes;
}

/**
 * The caches of the prompts the model was fed in the last round of generation, found again by
 * prefix: in a multi-turn episode the next prompt starts with the last one (RAGEN's history), so
 * its cache can be extended by the new tokens instead of recomputing the whole history. A round
 * is one turn over the live episodes: `add` the batches fed in it, then `advance`, which drops the
 * round before. Batches are kept whole; `rowsOf` gathers the rows a new batch continues in one op.
 */
export class PromptCache {
  private previous = new Map<string, CachedPrompt>();
  private current = new Map<string, CachedPrompt>();
  private previousBatches: Batch[] = [];
  private currentBatches: Batch[] = [];
  private lengths = new Set<number>();

  constructor(private readonly model: TransformerLM) {}

  /** The longest prompt of the last round that `prompt` strictly extends, or undefined. */
  find(prompt: readonly number[]): CachedPrompt | undefined {
    if (this.previous.size === 0) return undefined;
    const hashes = prefixHashes(prompt);
    let best: CachedPrompt | undefined;
    for (const length of this.lengths) {
      if (length >= prompt.length || (best && best.tokens.length >= length)) continue;
      const entry = this.previous.get(`${length}:${hashes[length]}`);
      if (entry && entry.tokens.every((t, i) => t === prompt[i])) best = entry;
    }
    return best;
  }

  /** The cache rows of prompts found in one batch of the last round, as a new batch cache. */
  rowsOf(found: readonly CachedPrompt[]): KvCache {
    const batch = found[0].batch;
    if (found.some((f) => f.batch !== batch)) throw new Error('rowsOf: prompts of one batch only');
    return this.model.copyRows(batch.cache, found.map((f) => f.row));
  }

  /** Keeps a copy of a freshly fed batch cache for the next round. */
  add(prompts: readonly (readonly number[])[], cache: KvCache): void {
    const batch: Batch = { cache: this.model.copyRows(cache, prompts.map((_, row) => row)) };
    this.currentBatches.push(batch);
    prompts.forEach((tokens, row) => this.current.set(`${tokens.length}:${prefixHashes(tokens)[tokens.length]}`, { tokens, batch, row }));
  }

  /** Ends a round: the prompts added in it become the ones `find` searches. */
  advance(): void {
    for (const batch of this.previousBatches) disposeCache(batch.cache);
    this.previousBatches = this.currentBatches;
    this.previous = this.current;
    this.currentBatches = [];
    this.current = new Map();
    this.lengths = new Set([...this.previous.values()].map((e) => e.tokens.length));
  }

  /** Disposes everything cached. */
  release(): void {
    this.advance();
    this.advance();
  }
}

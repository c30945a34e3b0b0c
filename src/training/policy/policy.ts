import type { EnvDefinition } from '../envs/types';
import type { ResponsePolicy } from '../rollout/engine';
import { Rng } from '../random';
import { decode, Generation, GenerationOptions } from './generate';
import { CachedPrompt, PromptCache } from './prompt-cache';
import { HISTORY_TOKENS, SPECIAL_TOKENS, Tokenizer } from './tokenizer';
import { TransformerLM } from './transformer';

/** Floats one generation chunk may keep alive (prefill attention and the KV cache): ≈ 256 MB. */
export const GENERATION_BUDGET_FLOATS = 64 * 1024 * 1024;

/**
 * Prompts of the full context a generation chunk may always hold (TransformerLM.budgetFor). A
 * decode step is a few hundred kernel calls whatever the batch: on the largest model the bounds
 * allow, two prompts fill GENERATION_BUDGET_FLOATS, and chunks of 2 generated 5× slower than
 * chunks of 12 (bench/reference-workload.ts, shape `largest`). Every default model fits at least
 * 13 in the budget, so only larger models' chunks (and their rows' draws from the shared Rng)
 * change.
 */
export const MIN_GENERATION_ROWS = 12;

/** The floats one generation chunk of `model` may keep alive. */
export function generationBudget(model: TransformerLM): number {
  return model.budgetFor(GENERATION_BUDGET_FLOATS, MIN_GENERATION_ROWS, false);
}

/**
 * The transformer as a rollout policy: batched sampling with a KV cache from a shared Rng. A
 * prompt that extends one of the previous call's (the next turn of an episode) is fed only its
 * new tokens on top of that prompt's cache; a batch too large for memory is generated in
 * consecutive chunks of rows. Call `release` when the rollout is over.
 */
export class TransformerPolicy implements ResponsePolicy {
  private readonly eosId: number;
  private readonly prompts: PromptCache;

  /**
   * `reusePrompts: false` feeds every prompt whole, as jobs stored before spec version 2 ran:
   * reusing a cache gives the same distribution up to rounding, which can still flip a sampled
   * token, and such jobs resume exactly as they would have run.
   */
  constructor(
    readonly model: TransformerLM,
    readonly tokenizer: Tokenizer,
    private readonly rng: Rng,
    private readonly reusePrompts = true,
  ) {
    this.eosId = tokenizer.id(SPECIAL_TOKENS.eos);
    this.prompts = new PromptCache(model);
  }

  respond(prompts: readonly (readonly number[])[], temperature: number, maxNewTokens: number): Generation[] {
    const options = { temperature, maxNewTokens, eosId: this.eosId, rng: this.rng };
    const length = Math.max(0, ...prompts.map((p) => p.length)) + maxNewTokens;
    const perChunk = this.model.rowsWithin(generationBudget(this.model), length, false);
    const out: Generation[] = new Array(prompts.length);
    // One batch per cached batch the prompts continue, and one of prompts fed from scratch.
    const found = prompts.map((p) => (this.reusePrompts ? this.prompts.find(p) : undefined));
    const groups = new Map<unknown, number[]>();
    prompts.forEach((_, i) => {
      const key = found[i]?.batch ?? null;
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
    });
    for (const rows of groups.values()) {
      for (let start = 0; start < rows.length; start += perChunk) {
        const chunk = rows.slice(start, start + perChunk);
        const generated = this.generateChunk(chunk.map((i) => prompts[i]), chunk.map((i) => found[i]), options);
        chunk.forEach((i, j) => (out[i] = generated[j]));
      }
    }
    this.prompts.advance();
    return out;
  }

  /** Drops the cached prompts (the rollout is over). */
  release(): void {
    this.prompts.release();
  }

  private generateChunk(prompts: readonly (readonly number[])[], found: readonly (CachedPrompt | undefined)[], options: GenerationOptions): Generation[] {
    const continued = found as CachedPrompt[];
    const start = found[0]
      ? this.model.extend(this.prompts.rowsOf(continued), prompts.map((p, i) => p.slice(continued[i].tokens.length)))
      : this.model.prefill(prompts);
    if (this.reusePrompts) this.prompts.add(prompts, start.cache);
    return decode(this.model, start, options);
  }
}

/**
 * The baseline that gives a success rate its meaning: always well-formed, actions uniformly at
 * random (between 1 and `actionsPerTurn` of them per turn) from the names `actionNames` gives for
 * the prompt (the bandit's arms differ per episode).
 */
export class RandomFormatPolicy implements ResponsePolicy {
  /**
   * The action names a prompt's current observation shows (the bandit's arms), or all of them
   * when it shows none (grid environments).
   */
  static shownActions(tokenizer: Tokenizer, names: readonly string[]): (prompt: readonly number[]) => readonly string[] {
    const obs = tokenizer.id(SPECIAL_TOKENS.obs);
    return (prompt) => {
      const current = prompt.slice(prompt.lastIndexOf(obs));
      const shown = names.filter((name) => tokenizer.has(name) && current.includes(tokenizer.id(name)));
      return shown.length > 0 ? shown : names;
    };
  }

  /**
   * The actions a random agent draws from for a prompt: the environment's `actionsFor` its
   * current observation (decoded from the prompt) where actions take an argument, else
   * `shownActions` over its action names.
   */
  static environmentActions(tokenizer: Tokenizer, definition: Pick<EnvDefinition, 'actionNames' | 'actionsFor'>): (prompt: readonly number[]) => readonly string[] {
    const actionsFor = definition.actionsFor;
    if (!actionsFor) return RandomFormatPolicy.shownActions(tokenizer, definition.actionNames);
    const obs = tokenizer.id(SPECIAL_TOKENS.obs);
    const ends = new Set([SPECIAL_TOKENS.resp, HISTORY_TOKENS.actionsLeft].filter((t) => tokenizer.has(t)).map((t) => tokenizer.id(t)));
    return (prompt) => {
      const current = prompt.slice(prompt.lastIndexOf(obs) + 1);
      const end = current.findIndex((id) => ends.has(id));
      return actionsFor(tokenizer.decode(end < 0 ? current : current.slice(0, end)));
    };
  }

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly actionNames: (prompt: readonly number[]) => readonly string[],
    private readonly actionsPerTurn: number,
    private readonly think: boolean,
    private readonly rng: Rng,
  ) {}

  respond(prompts: readonly (readonly number[])[]): Generation[] {
    return prompts.map((prompt) => {
      const names = this.actionNames(prompt);
      const count = 1 + this.rng.int(this.actionsPerTurn);
      const actions = Array.from({ length: count }, () => this.rng.pick(names));
      const body = `<answer> ${actions.join(' || ')} </answer>`;
      const text = this.think ? `<think> t0 </think> ${body}` : body;
      const tokens = [...this.tokenizer.encode(text), this.tokenizer.id(SPECIAL_TOKENS.eos)];
      return { tokens, logProbs: tokens.map(() => 0), entropies: tokens.map(() => 0), stopped: true };
    });
  }
}

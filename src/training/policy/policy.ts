import type { ResponsePolicy } from '../rollout/engine';
import { Rng } from '../random';
import { generate, Generation } from './generate';
import { SPECIAL_TOKENS, Tokenizer } from './tokenizer';
import { TransformerLM } from './transformer';

/** Floats one generation chunk may keep alive (prefill attention and the KV cache): ≈ 256 MB. */
export const GENERATION_BUDGET_FLOATS = 64 * 1024 * 1024;

/**
 * The transformer as a rollout policy: batched sampling with a KV cache from a shared Rng. A
 * batch too large for memory is generated in consecutive chunks of rows.
 */
export class TransformerPolicy implements ResponsePolicy {
  private readonly eosId: number;

  constructor(
    readonly model: TransformerLM,
    readonly tokenizer: Tokenizer,
    private readonly rng: Rng,
  ) {
    this.eosId = tokenizer.id(SPECIAL_TOKENS.eos);
  }

  respond(prompts: readonly (readonly number[])[], temperature: number, maxNewTokens: number): Generation[] {
    const options = { temperature, maxNewTokens, eosId: this.eosId, rng: this.rng };
    const length = Math.max(0, ...prompts.map((p) => p.length)) + maxNewTokens;
    const perChunk = Math.max(1, Math.floor(GENERATION_BUDGET_FLOATS / this.model.activationFloats(1, length, false)));
    if (prompts.length <= perChunk) return generate(this.model, prompts, options);
    const out: Generation[] = [];
    for (let start = 0; start < prompts.length; start += perChunk) out.push(...generate(this.model, prompts.slice(start, start + perChunk), options));
    return out;
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

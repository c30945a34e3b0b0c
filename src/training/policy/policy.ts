import type { ResponsePolicy } from '../rollout/engine';
import { Rng } from '../random';
import { generate, Generation } from './generate';
import { SPECIAL_TOKENS, Tokenizer } from './tokenizer';
import { TransformerLM } from './transformer';

/** The transformer as a rollout policy: batched sampling with a KV cache from a shared Rng. */
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
    return generate(this.model, prompts, { temperature, maxNewTokens, eosId: this.eosId, rng: this.rng });
  }
}

/**
 * The baseline that gives a success rate its meaning: always well-formed, actions uniformly at
 * random (between 1 and `actionsPerTurn` of them per turn).
 */
export class RandomFormatPolicy implements ResponsePolicy {
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly actionNames: () => readonly string[],
    private readonly actionsPerTurn: number,
    private readonly think: boolean,
    private readonly rng: Rng,
  ) {}

  respond(prompts: readonly (readonly number[])[]): Generation[] {
    return prompts.map(() => {
      const names = this.actionNames();
      const count = 1 + this.rng.int(this.actionsPerTurn);
      const actions = Array.from({ length: count }, () => this.rng.pick(names));
      const body = `<answer> ${actions.join(' || ')} </answer>`;
      const text = this.think ? `<think> t0 </think> ${body}` : body;
      const tokens = [...this.tokenizer.encode(text), this.tokenizer.id(SPECIAL_TOKENS.eos)];
      return { tokens, logProbs: tokens.map(() => 0), entropies: tokens.map(() => 0), stopped: true };
    });
  }
}

import { NEWLINE, REWARD_TOKENS, SPECIAL_TOKENS, Tokenizer } from '../policy/tokenizer';

/** A finished turn as the policy will see it in its history. */
export interface HistoryTurn {
  observation: string;
  /** The response tokens without the closing EOS. */
  responseTokens: readonly number[];
  reward: number;
}

/**
 * Builds the policy's input for the next turn:
 *   <bos> [<obs> observation <resp> response reward-sign]* <obs> observation <resp>
 * keeping at most `historyTurns` past turns and only as many of the newest as fit in `budget`
 * tokens (oldest dropped first). If even the current observation does not fit, its oldest
 * tokens are cut: the model always gets an input, never an error.
 */
export class ContextBuilder {
  private readonly bos: number;
  private readonly obs: number;
  private readonly resp: number;
  private readonly eos: number;
  private readonly observationCache = new Map<string, number[]>();

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly budget: number,
    private readonly historyTurns: number,
  ) {
    if (budget < 3) throw new Error(`context budget ${budget} is too small`);
    this.bos = tokenizer.id(SPECIAL_TOKENS.bos);
    this.obs = tokenizer.id(SPECIAL_TOKENS.obs);
    this.resp = tokenizer.id(SPECIAL_TOKENS.resp);
    this.eos = tokenizer.id(SPECIAL_TOKENS.eos);
  }

  build(history: readonly HistoryTurn[], observation: string): number[] {
    const current = [this.obs, ...this.encodeObservation(observation), this.resp];
    const room = this.budget - 1;
    if (current.length >= room) return [this.bos, ...current.slice(current.length - room)];
    const blocks: number[][] = [];
    let used = current.length;
    for (let i = history.length - 1; i >= Math.max(0, history.length - this.historyTurns); i--) {
      const block = this.turnBlock(history[i]);
      if (used + block.length > room) break;
      blocks.unshift(block);
      used += block.length;
    }
    return [this.bos, ...blocks.flat(), ...current];
  }

  private turnBlock(turn: HistoryTurn): number[] {
    const response = turn.responseTokens.filter((t) => t !== this.eos);
    const sign = turn.reward > 0 ? REWARD_TOKENS.positive : turn.reward < 0 ? REWARD_TOKENS.negative : REWARD_TOKENS.zero;
    return [this.obs, ...this.encodeObservation(turn.observation), this.resp, ...response, this.tokenizer.id(sign)];
  }

  private encodeObservation(observation: string): number[] {
    let ids = this.observationCache.get(observation);
    if (!ids) {
      ids = this.tokenizer.encode(observation.endsWith(NEWLINE) ? observation.slice(0, -1) : observation);
      if (this.observationCache.size > 10_000) this.observationCache.clear();
      this.observationCache.set(observation, ids);
    }
    return ids;
  }
}

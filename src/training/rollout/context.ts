import { HISTORY_TOKENS, NEWLINE, REWARD_TOKENS, SPECIAL_TOKENS, Tokenizer } from '../policy/tokenizer';

/**
 * How past turns are written into the policy's input:
 *   `ragen`: as RAGEN's context manager does: each turn's observation with the actions left,
 *     the response as it was generated (its EOS included) and the numeric reward. The context of
 *     every turn is then a prefix of the next one's, so a whole episode trains as one sequence.
 *   `sign`: the earlier format: the reward's sign only, no actions left, the EOS dropped.
 */
export type HistoryFormat = 'ragen' | 'sign';

/** A finished turn as the policy will see it in its history. */
export interface HistoryTurn {
  observation: string;
  /** The response tokens as generated (an EOS, if any, is dropped by the `sign` format). */
  responseTokens: readonly number[];
  reward: number;
  /** Actions the episode had left when this turn's observation was shown. */
  actionsLeft: number;
}

/** A number as the history writes it: rounded to two decimals, shortest form ("-0.3", "10", "0"). */
export function formatHistoryNumber(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

/**
 * Builds the policy's input for the next turn:
 *   ragen: <bos> [<obs> observation <left> n <resp> response <rwd> r]* <obs> observation <left> n <resp>
 *   sign:  <bos> [<obs> observation <resp> response reward-sign]* <obs> observation <resp>
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
    readonly format: HistoryFormat = 'ragen',
  ) {
    if (budget < 3) throw new Error(`context budget ${budget} is too small`);
    this.bos = tokenizer.id(SPECIAL_TOKENS.bos);
    this.obs = tokenizer.id(SPECIAL_TOKENS.obs);
    this.resp = tokenizer.id(SPECIAL_TOKENS.resp);
    this.eos = tokenizer.id(SPECIAL_TOKENS.eos);
    if (format === 'ragen' && !tokenizer.has(HISTORY_TOKENS.reward)) throw new Error('the ragen history format needs a tokenizer with the number tokens');
  }

  build(history: readonly HistoryTurn[], observation: string, actionsLeft: number): number[] {
    const current = this.turnStart(observation, actionsLeft);
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

  /** What precedes a response: the observation (and, in `ragen`, the actions left), then <resp>. */
  private turnStart(observation: string, actionsLeft: number): number[] {
    const left = this.format === 'ragen' ? [this.tokenizer.id(HISTORY_TOKENS.actionsLeft), ...this.number(actionsLeft)] : [];
    return [this.obs, ...this.encodeObservation(observation), ...left, this.resp];
  }

  private turnBlock(turn: HistoryTurn): number[] {
    const start = this.turnStart(turn.observation, turn.actionsLeft);
    if (this.format === 'ragen') return [...start, ...turn.responseTokens, this.tokenizer.id(HISTORY_TOKENS.reward), ...this.number(turn.reward)];
    const response = turn.responseTokens.filter((t) => t !== this.eos);
    const sign = turn.reward > 0 ? REWARD_TOKENS.positive : turn.reward < 0 ? REWARD_TOKENS.negative : REWARD_TOKENS.zero;
    return [...start, ...response, this.tokenizer.id(sign)];
  }

  private number(value: number): number[] {
    return this.tokenizer.encode(formatHistoryNumber(value));
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

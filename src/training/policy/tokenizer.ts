/**
 * Word-level tokenizer over an environment's closed text vocabulary.
 *
 * The vocabulary is: structural specials, the response-format tags (`<think>`, `</think>`,
 * `<answer>`, `</answer>`, the `||` action separator; see docs/training.md), a few free
 * "thought" tokens the policy may fill its reasoning with, reward-sign markers of the legacy
 * history, the environment's own observation symbols and action names, and (with RAGEN's
 * history) the tokens that write the numeric reward and the actions left. Text is split by
 * longest match, ignoring spaces; "\n" is a token of its own so grid rows stay visible.
 */
export const SPECIAL_TOKENS = {
  pad: '<pad>',
  bos: '<bos>',
  eos: '<eos>',
  unk: '<unk>',
  obs: '<obs>',
  resp: '<resp>',
} as const;

export const FORMAT_TOKENS = ['<think>', '</think>', '<answer>', '</answer>', '||'] as const;
/** Reward of the previous turn as a coarse sign, so the history says how a turn went. */
export const REWARD_TOKENS = { positive: '<r+>', zero: '<r0>', negative: '<r->' } as const;
/**
 * RAGEN's history writes each turn's numeric reward and the actions left: a marker, then the
 * number digit by digit ("-0.3" is `-`, `0`, `.`, `3`). These tokens are context only: the
 * policy never emits them.
 */
export const HISTORY_TOKENS = { actionsLeft: '<left>', reward: '<rwd>' } as const;
export const DIGIT_TOKENS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '.'] as const;
export const NUMBER_HISTORY_TOKENS: readonly string[] = [...Object.values(HISTORY_TOKENS), ...DIGIT_TOKENS];
export const THOUGHT_TOKEN_COUNT = 8;
export const THOUGHT_TOKENS = Array.from({ length: THOUGHT_TOKEN_COUNT }, (_, i) => `t${i}`);
export const NEWLINE = '\n';

/**
 * The open vocabulary's fallback, after a served environment's own words and actions: every
 * printable ASCII character as a token, and for any other character its UTF-8 bytes as tokens
 * `<0x80>` … `<0xFF>`, so every text encodes and nothing becomes `<unk>` (docs/environments.md).
 */
export const CHARACTER_TOKENS: readonly string[] = [
  ...Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)),
  ...Array.from({ length: 0x80 }, (_, i) => byteToken(0x80 + i)),
];

function byteToken(byte: number): string {
  return `<0x${byte.toString(16).toUpperCase()}>`;
}

export class Tokenizer {
  readonly tokens: readonly string[];
  private readonly ids = new Map<string, number>();
  /** Candidate tokens by first character, longest first. */
  private readonly byFirstChar = new Map<string, string[]>();
  /** Ids the policy must never emit: padding, sequence start, unknown, context-only history tokens. */
  readonly forbiddenIds: readonly number[];
  /** The vocabulary holds `CHARACTER_TOKENS`: an unmatched character is written as its UTF-8 bytes, never `<unk>`. */
  private readonly bytes: boolean;

  /** `extraTokens` are appended last (the numeric-history tokens), so older vocabularies keep their ids. */
  constructor(envVocabulary: readonly string[], actionNames: readonly string[], extraTokens: readonly string[] = []) {
    const all = [
      ...Object.values(SPECIAL_TOKENS),
      ...FORMAT_TOKENS,
      ...Object.values(REWARD_TOKENS),
      ...THOUGHT_TOKENS,
      NEWLINE,
      ...envVocabulary,
      ...actionNames,
      ...extraTokens,
    ];
    const unique: string[] = [];
    for (const token of all) {
      if (token.length === 0 || (token.trim() === '' && token !== NEWLINE)) {
        throw new Error(`invalid token ${JSON.stringify(token)}`);
      }
      if (!this.ids.has(token)) {
        this.ids.set(token, unique.length);
        unique.push(token);
      }
    }
    this.tokens = unique;
    for (const token of unique) {
      const list = this.byFirstChar.get(token[0]) ?? [];
      list.push(token);
      this.byFirstChar.set(token[0], list);
    }
    for (const list of this.byFirstChar.values()) list.sort((a, b) => b.length - a.length);
    this.bytes = this.ids.has(byteToken(0x80));
    const contextOnly = NUMBER_HISTORY_TOKENS.filter((t) => this.ids.has(t));
    this.forbiddenIds = [SPECIAL_TOKENS.pad, SPECIAL_TOKENS.bos, SPECIAL_TOKENS.unk, ...contextOnly].map((t) => this.id(t));
  }

  get size(): number {
    return this.tokens.length;
  }

  id(token: string): number {
    const id = this.ids.get(token);
    if (id === undefined) throw new Error(`token ${JSON.stringify(token)} is not in the vocabulary`);
    return id;
  }

  has(token: string): boolean {
    return this.ids.has(token);
  }

  /** Longest-match split; spaces separate but are not tokens; unknown characters become <unk>, or their bytes in an open vocabulary. */
  encode(text: string): number[] {
    const out: number[] = [];
    let i = 0;
    while (i < text.length) {
      const ch = text[i];
      if (ch === ' ' || ch === '\t' || ch === '\r') {
        i++;
        continue;
      }
      const match = this.byFirstChar.get(ch)?.find((token) => text.startsWith(token, i));
      if (match) {
        out.push(this.ids.get(match)!);
        i += match.length;
      } else if (this.bytes && ch.charCodeAt(0) >= 0x80) {
        const character = String.fromCodePoint(text.codePointAt(i)!);
        for (const byte of Buffer.from(character, 'utf8')) out.push(this.ids.get(byteToken(byte))!);
        i += character.length;
      } else {
        out.push(this.ids.get(SPECIAL_TOKENS.unk)!);
        i++;
      }
    }
    return out;
  }

  /** Tokens joined by single spaces (none around newlines), so `encode(decode(ids))` = ids. */
  decode(ids: readonly number[]): string {
    let text = '';
    let previous = '';
    for (const id of ids) {
      const token = this.tokens[id] ?? SPECIAL_TOKENS.unk;
      if (text.length > 0 && token !== NEWLINE && previous !== NEWLINE) text += ' ';
      text += token;
      previous = token;
    }
    return text;
  }
}

import { Type, type Static } from '@sinclair/typebox';
import { Rng } from '../random';
import { EnvNotResetError, EpisodeDoneError, invalidActionResult, matchAction, resolveEnvConfig } from './common';
import type { Env, StepResult } from './types';

/** One pair of symbolic arm names: `low` is the safe arm, `high` the risky one worth more on average. */
export interface ArmPair {
  readonly low: string;
  readonly high: string;
}

/** RAGEN's default pair: `phoenix` (safe) and `dragon` (risky). */
export const DEFAULT_ARM_PAIR: ArmPair = { low: 'phoenix', high: 'dragon' };

/** Unseen name pairs for the `alt` variant, one drawn per seed: does the policy learn the payout
 * structure or only the word "dragon"? */
export const ALT_ARM_PAIRS: readonly ArmPair[] = [
  { low: 'turtle', high: 'eagle' },
  { low: 'snail', high: 'falcon' },
  { low: 'sloth', high: 'cheetah' },
];

const ALL_ARM_PAIRS = [DEFAULT_ARM_PAIR, ...ALT_ARM_PAIRS];

/** Every arm name of both variants (the registry's config-independent action names). */
export const BANDIT_ARM_NAMES: readonly string[] = ALL_ARM_PAIRS.flatMap((pair) => [pair.low, pair.high]);

/** Observation words: one vocabulary covers both variants. */
export const BANDIT_VOCABULARY: readonly string[] = ['Arms', ':', ...BANDIT_ARM_NAMES];

/** Word → meaning for the catalogue; it does not reveal which arm is the high one. */
export const BANDIT_LEGEND: Readonly<Record<string, string>> = {
  Arms: 'the arms that can be pulled, listed in random order',
  ':': 'separator',
  ...Object.fromEntries(BANDIT_ARM_NAMES.map((name) => [name, 'an arm'])),
};

/** TypeBox schema of the bandit config (RAGEN's Bi-Arm Bandit defaults). */
export const BanditConfigSchema = Type.Object(
  {
    variant: Type.Optional(
      Type.Union([Type.Literal('default'), Type.Literal('alt')], {
        default: 'default',
        description: "'default': phoenix/dragon; 'alt': unseen name pairs (turtle/eagle, …) to test generalisation",
      }),
    ),
    lowReward: Type.Optional(
      Type.Number({ default: 0.1, minimum: -10, maximum: 10, description: 'Payout of the low arm, every pull' }),
    ),
    highReward: Type.Optional(
      Type.Number({ default: 1, minimum: -10, maximum: 10, description: 'Payout of the high arm when it pays' }),
    ),
    highProb: Type.Optional(
      Type.Number({ default: 0.25, minimum: 0, maximum: 1, description: 'Probability that the high arm pays' }),
    ),
  },
  { additionalProperties: false },
);

/** A complete bandit config (every field resolved). */
export type BanditConfig = Required<Static<typeof BanditConfigSchema>>;

/** RAGEN's defaults: phoenix pays 0.1, dragon pays 1.0 with probability 0.25. */
export const BANDIT_DEFAULTS: BanditConfig = { variant: 'default', lowReward: 0.1, highReward: 1, highProb: 0.25 };

/** Rng streams: the episode layout (name pair, order) and the payout draw are independent. */
const LAYOUT_STREAM = 101;
const PAYOUT_STREAM = 102;

/** The episode as drawn by `reset`. */
export interface BanditState {
  readonly pair: ArmPair;
  /** Arm names in the order the observation lists them. */
  readonly order: readonly string[];
  readonly pulled: string | null;
}

/**
 * RAGEN's two-armed bandit (Bi-Arm Bandit): one turn, one pull. The low arm pays `lowReward`
 * always; the high arm pays `highReward` with probability `highProb`, else 0 — with the defaults
 * the high arm is worth 0.25 in expectation against 0.1, so success means choosing it.
 *
 * Observation `Arms : dragon phoenix` (order shuffled per seed). An unknown arm is not executed
 * (actionValid false, reward 0, episode continues); a valid pull ends the episode.
 * `step()` after the episode ended throws `EpisodeDoneError`.
 */
export class BanditEnv implements Env {
  readonly id = 'bandit';
  readonly vocabulary = BANDIT_VOCABULARY;
  readonly symbolLegend = BANDIT_LEGEND;
  readonly config: BanditConfig;
  private episode: BanditState | null = null;
  private payoutRng: Rng | null = null;

  constructor(config: Partial<BanditConfig> = {}) {
    this.config = resolveEnvConfig('bandit', BanditConfigSchema, BANDIT_DEFAULTS, config);
  }

  /** The two arms of the current episode in observation order (before reset: the variant's names). */
  get actionNames(): readonly string[] {
    if (this.episode) return this.episode.order;
    const pairs = this.config.variant === 'default' ? [DEFAULT_ARM_PAIR] : ALT_ARM_PAIRS;
    return pairs.flatMap((pair) => [pair.low, pair.high]);
  }

  get done(): boolean {
    return this.episode?.pulled != null;
  }

  get state(): BanditState {
    if (!this.episode) throw new EnvNotResetError(this.id);
    return this.episode;
  }

  reset(seed: number): string {
    const layout = new Rng(seed, LAYOUT_STREAM);
    const pair = this.config.variant === 'default' ? DEFAULT_ARM_PAIR : layout.pick(ALT_ARM_PAIRS);
    this.episode = { pair, order: layout.shuffle([pair.low, pair.high]), pulled: null };
    this.payoutRng = new Rng(seed, PAYOUT_STREAM);
    return this.render();
  }

  step(action: string): StepResult {
    const episode = this.state;
    if (episode.pulled !== null) throw new EpisodeDoneError(this.id);
    const arm = matchAction(action, episode.order);
    if (arm === undefined) {
      return invalidActionResult(this.render());
    }
    this.episode = { ...episode, pulled: arm };
    const high = arm === episode.pair.high;
    // Draw only for the high arm, so the payout stream is consumed exactly when it matters.
    const reward = high
      ? this.payoutRng!.next() < this.config.highProb
        ? this.config.highReward
        : 0
      : this.config.lowReward;
    return {
      observation: this.render(),
      reward,
      done: true,
      info: { success: high, actionValid: true, actionEffective: true },
    };
  }

  render(): string {
    return `Arms : ${this.state.order.join(' ')}`;
  }

  clone(branchSeed?: number): BanditEnv {
    const copy = new BanditEnv(this.config);
    copy.episode = this.episode;
    if (branchSeed !== undefined) copy.payoutRng = new Rng(branchSeed, PAYOUT_STREAM);
    else copy.payoutRng = this.payoutRng ? Rng.fromState(this.payoutRng.getState()) : null;
    return copy;
  }
}

import type { TSchema } from '@sinclair/typebox';
import type { ServedEnvironment } from './remote/remote-env';

/** What the environment reports about one executed action. */
export interface StepInfo {
  /** The task was accomplished (goal reached, puzzle solved, high arm chosen). */
  success: boolean;
  /** The action was one of the environment's action names. */
  actionValid: boolean;
  /** The action changed the state (walking into a wall is valid but not effective). */
  actionEffective: boolean;
}

/** A value, or a promise of it: built-in environments answer at once, remote ones over the network. */
export type Awaitable<T> = T | Promise<T>;

export interface StepResult {
  /** `render()` after the action. */
  observation: string;
  reward: number;
  /** The episode is over (goal, hole, solved, or the bandit's single pull). */
  done: boolean;
  info: StepInfo;
}

/**
 * A text environment in the RAGEN mould: every observation is a string over a small closed
 * vocabulary (`vocabulary`), every action one of `actionNames` or, where actions take an
 * argument, `name[argument]` with the argument a vocabulary word. Deterministic per seed:
 * `reset(seed)` followed by the same actions gives the same observations and rewards, and
 * stochastic dynamics (slippery ice, the bandit's payout) draw from a generator seeded by `reset`.
 *
 * `reset`, `step` and `clone` may answer with a promise (an environment served by another process,
 * `envs/remote/`); the rollout engine awaits every call and plays the episodes of a turn
 * concurrently, so a remote environment's requests of one turn are in flight together. A built-in
 * answers synchronously, and code that holds a concrete built-in class keeps its synchronous types.
 */
export interface Env {
  readonly id: string;
  /** Canonical action words, e.g. ["Up", "Down", "Left", "Right"]. Matching is case-insensitive. */
  readonly actionNames: readonly string[];
  /** Symbol → meaning, shown to users and in the catalogue. */
  readonly symbolLegend: Readonly<Record<string, string>>;
  /**
   * Every token an observation can contain (grid symbols, words). `render()` output split into
   * these tokens by longest match, ignoring spaces, with "\n" as a token of its own.
   */
  readonly vocabulary: readonly string[];
  /** Starts an episode; returns the first observation. */
  reset(seed: number): Awaitable<string>;
  /**
   * Executes one action: an action word, or for parameterised actions (tool calls) a name with
   * its argument, `search[Zorvek]`. An unknown action is not executed: actionValid=false, reward 0.
   */
  step(action: string): Awaitable<StepResult>;
  render(): string;
  /**
   * Independent copy of the current state, including the dynamics' random state. A tree rollout
   * passes `branchSeed` at a branch point: the copy's stochastic dynamics (slips, payouts) then
   * draw from a generator seeded by it, so the branch samples its own future as an independent
   * rollout would, instead of replaying the original's draws. Deterministic environments ignore it.
   */
  clone(branchSeed?: number): Awaitable<Env>;
  /** Ends the episode where the environment holds resources for it (a server's session); best effort. */
  close?(): Awaitable<void>;
  /** True once the episode has ended. */
  readonly done: boolean;
}

/** A built-in environment: it answers every call at once, so code that plays one needs no await. */
export interface SyncEnv extends Env {
  reset(seed: number): string;
  step(action: string): StepResult;
  clone(branchSeed?: number): SyncEnv;
}

/** The turn structure of what is left of an episode: observations come only between turns. */
export interface TurnBudget {
  turns: number;
  actionsPerTurn: number;
  actions: number;
}

/** An expert that knows the task: next actions from the current state (re-planned every call). */
export type Expert = (env: Env) => string[];

/** An expert as a definition offers it: a built-in's answers at once, a server's over the network. */
export type EnvExpert = (env: Env) => Awaitable<string[]>;

/**
 * An expert that plans one turn at a time under the turn structure: this turn's actions given the
 * turns and actions left, or null to leave the turn to the expert's plan spread over the turns.
 */
export type TurnExpert = (env: Env, turn: TurnBudget) => string[] | null;

/**
 * The expert's reasoning for the turn it is about to play, as words of the environment's
 * vocabulary: the `<think>` text of the demonstrations when `rollout.think` is on. null where it
 * has none (the demonstrations then think a few free thought tokens).
 */
export type ExpertThought = (env: Env) => string | null;

/** Registry entry: how to build an environment, its config schema, and what it offers. */
export interface EnvDefinition<C = Record<string, unknown>, E extends Env = Env> {
  id: string;
  description: string;
  /** TypeBox schema of the config, every field optional with a default and bounds. */
  configSchema: TSchema;
  defaults: C;
  create(config: C): E;
  /** Present when demonstrations are possible (FrozenLake shortest path, Sokoban BFS). */
  expert?: EnvExpert;
  /**
   * Present where a plan spread over the turns is not the best demonstration (on slippery ice a
   * slip mid-turn goes unseen until the next turn): the demonstrations take each turn from it.
   */
  turnExpert?: TurnExpert;
  /** Present where the expert's reasoning can be written in the environment's words (lookup-qa). */
  expertThought?: ExpertThought;
  /** Actions of this environment, independent of config (the tool names where actions take an argument). */
  actionNames: readonly string[];
  /**
   * The well-formed actions an agent reading `observation` may take, for environments whose
   * actions take an argument (lookup-qa: `search[e]` and `answer[e]` for each entity e shown).
   * The random agent and the format warm-up draw uniformly from it; absent, they draw from the
   * action names. Its actions must encode in the job's vocabulary.
   */
  actionsFor?(observation: string): readonly string[];
  /**
   * For environments whose actions are tool calls: of one episode's executed actions, how many
   * were tool calls and how many of those the tool ran (`tools/calls_per_episode`,
   * `tools/success_rate`).
   */
  toolCalls?(config: C, actions: readonly string[]): { calls: number; succeeded: number };
  /**
   * Rollout budgets this environment is played with when the job spec does not say (RAGEN's
   * per-environment settings, e.g. one turn and one action for the bandit).
   */
  rolloutDefaults?: Readonly<Record<string, number | boolean>>;
  /** Union of the vocabulary of every config (so a model can be built before the env). */
  vocabulary(config: C): readonly string[];
  /** Most tokens one observation of this config can take (sizes the default context window). */
  observationTokens(config: C): number;
  /** Set for an environment served by another process (envs/remote/): where, how, and its manifest's digest. */
  served?: ServedEnvironment;
}

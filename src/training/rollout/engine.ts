import type { Env } from '../envs/types';
import type { Generation } from '../policy/generate';
import type { Tokenizer } from '../policy/tokenizer';
import { ContextBuilder, HistoryTurn } from './context';
import { ParsedResponse, parseResponse } from './parse';

/** Anything that can answer a batch of prompts: the transformer policy, or a baseline. */
export interface ResponsePolicy {
  respond(prompts: readonly (readonly number[])[], temperature: number, maxNewTokens: number): Generation[];
  /** Frees what the policy kept between the turns of a rollout (called when the rollout ends). */
  release?(): void;
}

export interface RolloutSettings {
  maxTurns: number;
  maxActionsPerTurn: number;
  maxActionsPerEpisode: number;
  temperature: number;
  maxTokensPerTurn: number;
  think: boolean;
  /** Added to a turn's reward when its response is malformed or names an invalid action. */
  formatPenalty: number;
}

/** Which episode to play: all samples of a group start from the same seed. */
export interface EpisodeRequest {
  seed: number;
  group: number;
  sample: number;
}

export interface Turn {
  observation: string;
  /** Exactly the tokens the policy was conditioned on. */
  context: number[];
  response: Generation;
  text: string;
  parsed: ParsedResponse;
  /** Actions actually executed (within the per-turn and per-episode budgets). */
  executed: string[];
  invalidActions: number;
  envReward: number;
  penalised: boolean;
  /** envReward plus the format penalty when penalised. */
  reward: number;
}

export interface Trajectory extends EpisodeRequest {
  initialObservation: string;
  turns: Turn[];
  /** Sum of turn rewards and penalties. */
  return: number;
  success: boolean;
  actionCount: number;
  formatErrors: number;
  /** The environment ended the episode (rather than a budget). */
  terminated: boolean;
  /**
   * Set on a tree rollout's branches: the sample it was copied from and how many of its turns
   * (the shared prefix, which this trajectory carries too) were played before the copy.
   */
  branchedFrom?: { sample: number; turn: number };
}

/** An episode being played: its environment, what has been recorded, and what the policy reads next. */
export interface LiveEpisode {
  env: Env;
  trajectory: Trajectory;
  history: HistoryTurn[];
  observation: string;
  ended: boolean;
}

/** A fresh episode on `env`, reset to the request's seed. */
export async function startEpisode(env: Env, request: EpisodeRequest): Promise<LiveEpisode> {
  const observation = await env.reset(request.seed);
  return {
    env,
    observation,
    history: [],
    ended: false,
    trajectory: {
      ...request,
      initialObservation: observation,
      turns: [],
      return: 0,
      success: false,
      actionCount: 0,
      formatErrors: 0,
      terminated: false,
    },
  };
}

/** Fresh episodes for `requests`, reset together (a remote environment's resets are in flight at once). */
export function startEpisodes(makeEnv: () => Env, requests: readonly EpisodeRequest[]): Promise<LiveEpisode[]> {
  return Promise.all(requests.map((request) => startEpisode(makeEnv(), request)));
}

/**
 * Ends the episodes' sessions where their environment holds one (a server's), best effort and
 * together. Never rejects (a close that fails costs the server memory, not the run), so a caller
 * may leave it unawaited; closing an episode twice sends nothing the second time.
 */
export async function closeEpisodes(episodes: readonly LiveEpisode[]): Promise<void> {
  if (episodes.length === 0 || !episodes[0].env.close) return;
  await Promise.allSettled(episodes.map(async (e) => e.env.close?.()));
}

/**
 * Plays every requested episode for up to `maxTurns` turns, batching one policy call per turn
 * over all episodes still running (docs/training.md, "Turns and parsing"). A turn parses the
 * response, executes at most `maxActionsPerTurn` actions (and never more than
 * `maxActionsPerEpisode` in the episode), and scores env rewards plus the format penalty.
 */
export async function rollout(
  policy: ResponsePolicy,
  makeEnv: () => Env,
  requests: readonly EpisodeRequest[],
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  settings: RolloutSettings,
): Promise<Trajectory[]> {
  const episodes = await startEpisodes(makeEnv, requests);
  try {
    // An episode that ended frees its server session at once: the closes go out while the policy
    // computes the next turn, when the server is idle, and nothing waits for their answers.
    await playToEnd(policy, episodes, tokenizer, contexts, settings, (played) => void closeEpisodes(played.filter((e) => e.ended)));
  } finally {
    void closeEpisodes(episodes);
  }
  return episodes.map((e) => e.trajectory);
}

/**
 * Plays the episodes turn by turn until each has ended or `maxTurns` have passed, then frees what
 * the policy kept between turns; `afterTurn` sees the episodes that played each turn.
 */
export async function playToEnd(
  policy: ResponsePolicy,
  episodes: readonly LiveEpisode[],
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  settings: RolloutSettings,
  afterTurn?: (played: readonly LiveEpisode[]) => void,
): Promise<void> {
  try {
    for (let turn = 0; turn < settings.maxTurns; turn++) {
      const live = episodes.filter((e) => !e.ended);
      if (live.length === 0) break;
      await playTurns(policy, live, tokenizer, contexts, settings);
      afterTurn?.(live);
    }
  } finally {
    policy.release?.();
  }
}

/**
 * One turn of each given episode, in one policy call: the context of each, its response, and
 * the turn played. Every rollout engine plays its turns through here, so they share one meaning
 * of a turn (and tool or environment feedback is just the next observation).
 */
export async function playTurns(policy: ResponsePolicy, episodes: readonly LiveEpisode[], tokenizer: Tokenizer, contexts: ContextBuilder, settings: RolloutSettings): Promise<void> {
  const eos = tokenizer.id('<eos>');
  const prompts = episodes.map((e) => contexts.build(e.history, e.observation, actionsLeft(e, settings)));
  const responses = policy.respond(prompts, settings.temperature, settings.maxTokensPerTurn);
  // Each episode steps its own environment in order; the episodes of the turn go on together, so
  // a remote environment's requests overlap (a built-in's steps answer at once either way).
  await Promise.all(
    episodes.map((episode, i) => {
      const response = responses[i];
      const text = tokenizer.decode(response.tokens.filter((t) => t !== eos));
      return playTurn(episode, prompts[i], response, text, settings);
    }),
  );
}

function actionsLeft(episode: LiveEpisode, settings: RolloutSettings): number {
  return settings.maxActionsPerEpisode - episode.trajectory.actionCount;
}

async function playTurn(episode: LiveEpisode, context: number[], response: Generation, text: string, settings: RolloutSettings): Promise<void> {
  const { env, trajectory } = episode;
  const leftBefore = actionsLeft(episode, settings);
  const parsed = parseResponse(text, settings.think);
  const executed: string[] = [];
  let invalidActions = 0;
  let envReward = 0;
  for (const action of parsed.actions.slice(0, settings.maxActionsPerTurn)) {
    if (env.done || trajectory.actionCount >= settings.maxActionsPerEpisode) break;
    const result = await env.step(action);
    if (!result.info.actionValid) {
      invalidActions++;
      continue;
    }
    executed.push(action);
    trajectory.actionCount++;
    envReward += result.reward;
    if (result.info.success) trajectory.success = true;
  }
  const penalised = !parsed.formatValid || invalidActions > 0;
  const reward = envReward + (penalised ? settings.formatPenalty : 0);
  const observationBefore = episode.observation;
  trajectory.turns.push({ observation: observationBefore, context, response, text, parsed, executed, invalidActions, envReward, penalised, reward });
  trajectory.return += reward;
  if (penalised) trajectory.formatErrors++;
  episode.history.push({ observation: observationBefore, responseTokens: response.tokens, reward, actionsLeft: leftBefore });
  episode.observation = env.render();
  trajectory.terminated = env.done;
  episode.ended = env.done || trajectory.actionCount >= settings.maxActionsPerEpisode;
}

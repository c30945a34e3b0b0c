import { passAtK } from './algorithms/groupFilters';
import { mean } from './algorithms/stats';
import { loadPolicyFromCheckpoint } from './checkpoint';
import { tokenizerFor } from './episode-io';
import { getEnvDefinition } from './envs/registry';
import type { EnvDefinition } from './envs/types';
import { decodeCheckpoint } from './policy/checkpoint-format';
import { TransformerPolicy } from './policy/policy';
import { HISTORY_TOKENS, NUMBER_HISTORY_TOKENS } from './policy/tokenizer';
import { Rng } from './random';
import { transcript } from './records';
import { ContextBuilder } from './rollout/context';
import { Trajectory, rollout } from './rollout/engine';
import { evaluationSeed } from './seeds';
import { FieldError, checkAgainst } from './spec/errors';
import type { JobSpec } from './spec/validate';

/** What decides whether a policy can read an environment: its vocabulary and its context window. */
export interface CheckpointShape {
  tokens: readonly string[];
  contextLength: number;
}

/** The rollout settings a checkpoint is played with (the job's own, so turns look as in training). */
export type PlaySettings = Pick<JobSpec['rollout'], 'maxTurns' | 'maxActionsPerTurn' | 'maxActionsPerEpisode' | 'maxTokensPerTurn' | 'think' | 'formatPenalty' | 'historyTurns' | 'historyFormat'>;

export interface CheckpointEvaluationRequest {
  environment: { id: string; config: Record<string, unknown> };
  /** Episode seeds: the first `episodes` of the held-out evaluation range, as the trainer's evaluation. */
  episodes: number;
  /** Samples per seed (pass@k). */
  k: number;
  /** 0 = greedy (then all k samples of a seed are the same). */
  temperature: number;
  /** Seed of the sampling generator. */
  seed: number;
}

export interface CheckpointEvaluation {
  /** Step of the checkpoint. */
  step: number;
  episodes: number;
  k: number;
  temperature: number;
  /** Mean success over all episodes × k samples (pass@1 estimated from k samples per seed). */
  success: number;
  /** Share of seeds solved by at least one of their k samples. */
  passAtK: number;
  meanReturn: number;
  /** Share of turns whose response parsed and named valid actions. */
  formatValid: number;
  /** Transcripts of the first samples of the first seeds. */
  samples: string[];
}

const EVALUATION_RNG_STREAM = 4;
const SAMPLE_TRANSCRIPTS = 2;

/**
 * The vocabulary and context length a job's checkpoints have, from its resolved spec (and, for a
 * registered environment, its served definition).
 */
export function shapeOfJob(spec: Pick<JobSpec, 'environment' | 'rollout' | 'model'>, definition: EnvDefinition = getEnvDefinition(spec.environment.id)): CheckpointShape {
  const tokenizer = tokenizerFor(definition, spec);
  return { tokens: tokenizer.tokens, contextLength: spec.model.config.contextLength };
}

/** The vocabulary and context length recorded in checkpoint bytes (no tensors are built). */
export function shapeOfCheckpoint(bytes: Uint8Array): CheckpointShape {
  const { meta } = decodeCheckpoint<{ tokens: string[]; modelConfig: { contextLength: number } }>(bytes);
  return { tokens: meta.tokens, contextLength: meta.modelConfig.contextLength };
}

/**
 * Why a policy of `shape` cannot play `environment` with `settings`, one problem per field (under
 * `prefix`): a config outside the environment's schema; observation symbols or action names
 * missing from its vocabulary (they would be read as <unk>, and the actions could never be
 * written); a history format whose number tokens it lacks; or a single turn's input (observation,
 * markers, actions left) that does not fit the context window beside one response, so that even
 * the current observation would be cut. An empty list means it can be played. `definition` is the
 * environment's (a registered one's served definition; a built-in's by default).
 */
export function playabilityProblems(
  shape: CheckpointShape,
  settings: PlaySettings,
  environment: { id: string; config: unknown },
  prefix = '',
  definition: EnvDefinition = getEnvDefinition(environment.id),
): FieldError[] {
  const at = (field: string) => [prefix, field].filter(Boolean).join('.');
  const { value: config, errors } = checkAgainst<Record<string, unknown>>(definition.configSchema, environment.config, at('environment.config'));
  if (errors.length > 0) return errors;
  const known = new Set(shape.tokens);
  const problems: FieldError[] = [];
  const missing = [...definition.vocabulary({ ...definition.defaults, ...config }), ...definition.actionNames].filter((token) => !known.has(token));
  if (missing.length > 0) {
    problems.push({
      field: at('environment.id'),
      message: `the checkpoint's vocabulary has no ${[...new Set(missing)].map((t) => JSON.stringify(t)).join(', ')}: it cannot read ${environment.id} observations or write its actions`,
    });
  }
  const numberTokens = settings.historyFormat === 'ragen' ? NUMBER_HISTORY_TOKENS.filter((t) => !known.has(t)) : [];
  if (numberTokens.length > 0) problems.push({ field: at('rollout.historyFormat'), message: `the checkpoint's vocabulary has no ${HISTORY_TOKENS.reward} number tokens: it was trained with the sign history` });
  // <bos> <obs> … <resp>, and in RAGEN's history <left> with the actions left, digit by digit.
  const markers = 3 + (settings.historyFormat === 'ragen' ? 1 + String(settings.maxActionsPerEpisode).length : 0);
  const turnTokens = definition.observationTokens({ ...definition.defaults, ...config }) + markers;
  const room = shape.contextLength - settings.maxTokensPerTurn;
  if (turnTokens > room) {
    problems.push({
      field: at('environment.config'),
      message: `one ${environment.id} observation of this config takes ${turnTokens} tokens with its markers; the checkpoint's context of ${shape.contextLength} holds ${room} beside a ${settings.maxTokensPerTurn}-token response`,
    });
  }
  return problems;
}

/**
 * Plays a checkpoint's policy on an environment config: k samples on each of the first
 * `episodes` held-out evaluation seeds, seed by seed (sample j of seed i at i × k + j). Throws
 * when the config is not playable (`playabilityProblems`). Pure: same bytes and request, same
 * trajectories on the same backend (and the same server, for a registered environment's
 * `definition`); every tensor it makes is disposed.
 */
export async function playCheckpoint(
  bytes: Uint8Array,
  settings: PlaySettings,
  request: CheckpointEvaluationRequest,
  definition: EnvDefinition = getEnvDefinition(request.environment.id),
): Promise<{ step: number; trajectories: Trajectory[] }> {
  const problems = playabilityProblems(shapeOfCheckpoint(bytes), settings, request.environment, '', definition);
  if (problems.length > 0) throw new Error(problems.map((p) => `${p.field}: ${p.message}`).join('; '));
  const { value: config } = checkAgainst<Record<string, unknown>>(definition.configSchema, request.environment.config, 'environment.config');
  const { model, tokenizer, step } = loadPolicyFromCheckpoint(bytes);
  try {
    const contexts = new ContextBuilder(tokenizer, model.config.contextLength - settings.maxTokensPerTurn, settings.historyTurns, settings.historyFormat);
    const policy = new TransformerPolicy(model, tokenizer, new Rng(request.seed, EVALUATION_RNG_STREAM));
    const requests = Array.from({ length: request.episodes * request.k }, (_, i) => ({ seed: evaluationSeed(Math.floor(i / request.k)), group: Math.floor(i / request.k), sample: i % request.k }));
    return { step, trajectories: await rollout(policy, () => definition.create(config), requests, tokenizer, contexts, { ...settings, temperature: request.temperature }) };
  } finally {
    model.dispose();
  }
}

/**
 * A checkpoint's policy played (`playCheckpoint`) and summed up: success = mean over all
 * episodes; pass@k = share of seeds where at least one of the k samples succeeded (for k = 1 the
 * two are equal).
 */
export async function evaluateCheckpoint(
  bytes: Uint8Array,
  settings: PlaySettings,
  request: CheckpointEvaluationRequest,
  definition: EnvDefinition = getEnvDefinition(request.environment.id),
): Promise<CheckpointEvaluation> {
  const { step, trajectories } = await playCheckpoint(bytes, settings, request, definition);
  const bySeed = Array.from({ length: request.episodes }, (_, seed) => trajectories.slice(seed * request.k, (seed + 1) * request.k).map((t) => t.success));
  return {
    step,
    episodes: request.episodes,
    k: request.k,
    temperature: request.temperature,
    success: mean(trajectories.map((t) => (t.success ? 1 : 0))),
    passAtK: passAtK(bySeed),
    meanReturn: mean(trajectories.map((t) => t.return)),
    formatValid: mean(trajectories.flatMap((t) => t.turns.map((turn) => (turn.penalised ? 0 : 1)))),
    samples: trajectories.filter((t) => t.sample === 0 && t.group < SAMPLE_TRANSCRIPTS).map(transcript),
  };
}

import * as tf from '@tensorflow/tfjs';
import { ACTIVATION_BUDGET_FLOATS, accumulatedStep } from './accumulate';
import { tokenLogProbs, weightedTokenSum } from './algorithms/losses';
import type { EnvDefinition, TurnBudget } from './envs/types';
import { Adam } from './policy/adam';
import { PackedTurns, TurnSequence, packTurns } from './policy/batch';
import { SPECIAL_TOKENS, THOUGHT_TOKENS, Tokenizer } from './policy/tokenizer';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import { ContextBuilder, HistoryTurn } from './rollout/context';
import type { RolloutSettings } from './rollout/engine';
import { formatResponse } from './rollout/parse';

export type ScriptedKind = 'format' | 'demonstrations';

/**
 * Plays scripted episodes until `count` turns are collected and returns them as supervised rows,
 * with contexts built exactly as in RL rollouts and each episode's turns packed into as few rows
 * as its history allows (`packTurns`). `format`: well-formed responses with uniformly random actions
 * (from `actionsFor` the observation where actions take an argument) — format knowledge, no task
 * knowledge (the analogue of an instruct model). `demonstrations`: the environment's expert,
 * re-planned each turn (the analogue of a cold-start SFT model). The thought is the expert's
 * reasoning where the environment can write it (`expertThought`, with `<think>` on), else a few
 * free thought tokens, which teach no reasoning.
 */
export async function scriptedExamples(
  kind: ScriptedKind,
  definition: EnvDefinition,
  envConfig: Record<string, unknown>,
  settings: RolloutSettings,
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  rng: Rng,
  seeds: () => number,
  count: number,
): Promise<PackedTurns[]> {
  const examples: PackedTurns[] = [];
  let turns = 0;
  const eos = tokenizer.id(SPECIAL_TOKENS.eos);
  for (let guard = 0; turns < count && guard < count * 4; guard++) {
    const env = definition.create(envConfig);
    let observation = await env.reset(seeds());
    const history: HistoryTurn[] = [];
    const episode: TurnSequence[] = [];
    let actionsLeft = settings.maxActionsPerEpisode;
    for (let turn = 0; turn < settings.maxTurns && !env.done && actionsLeft > 0 && turns < count; turn++) {
      const cap = Math.min(settings.maxActionsPerTurn, actionsLeft);
      const actions = kind === 'format' ? randomActions(definition.actionsFor?.(observation) ?? env.actionNames, cap, rng) : await expertActions(definition, env, { turns: settings.maxTurns - turn, actionsPerTurn: settings.maxActionsPerTurn, actions: actionsLeft });
      if (actions.length === 0) break;
      const expertThought = kind === 'demonstrations' && settings.think ? definition.expertThought?.(env) : null;
      const thought = expertThought ?? Array.from({ length: 1 + rng.int(3) }, () => rng.pick(THOUGHT_TOKENS)).join(' ');
      const response = [...tokenizer.encode(formatResponse(thought, actions, settings.think)), eos];
      if (response.length > settings.maxTokensPerTurn) break;
      episode.push({ context: contexts.build(history, observation, actionsLeft), response });
      turns++;
      let reward = 0;
      const leftBefore = actionsLeft;
      for (const action of actions) {
        if (env.done) break;
        reward += (await env.step(action)).reward;
        actionsLeft--;
      }
      history.push({ observation, responseTokens: response, reward, actionsLeft: leftBefore });
      observation = env.render();
    }
    examples.push(...packTurns(episode));
    await env.close?.();
  }
  return examples;
}

function randomActions(names: readonly string[], cap: number, rng: Rng): string[] {
  return Array.from({ length: 1 + rng.int(cap) }, () => rng.pick(names));
}

/**
 * One turn of the demonstrations: the turn expert's, where the environment has one and it answers;
 * otherwise the expert's plan spread over the turns left, so a slip can be corrected next turn.
 */
export async function expertActions(definition: EnvDefinition, env: ReturnType<EnvDefinition['create']>, turn: TurnBudget): Promise<string[]> {
  const planned = definition.turnExpert?.(env, turn);
  if (planned) return planned;
  return spreadPlan(await definition.expert!(env), turn);
}

/** The first part of a plan, spread evenly over the turns left and capped at a turn's actions. */
export function spreadPlan(plan: readonly string[], turn: TurnBudget): string[] {
  const cap = Math.min(turn.actionsPerTurn, turn.actions);
  return plan.slice(0, Math.min(cap, Math.max(1, Math.ceil(plan.length / turn.turns))));
}

/**
 * One supervised step: token-mean cross-entropy of the responses given their contexts (plus,
 * with `worldModelCoef`, that weight times the token-mean cross-entropy of the environment's
 * feedback between responses), Adam, gradient clipping at `maxGradNorm`. The means are over the
 * whole batch, whatever the chunks its rows are cut into to fit the activation budget, so the
 * step's memory depends on the model and the context, not on `training.warmup.batchSize`.
 * Returns the loss before the update.
 */
export function supervisedStep(
  model: TransformerLM,
  optimizer: Adam,
  rows: readonly PackedTurns[],
  maxGradNorm: number,
  worldModelCoef = 0,
  budget = ACTIVATION_BUDGET_FLOATS,
): number {
  const responseTokens = rows.reduce((n, r) => n + r.responseIndex.length, 0);
  const feedbackTokens = rows.reduce((n, r) => n + r.feedbackIndex.length, 0);
  const parts: tf.Scalar[] = [];
  accumulatedStep(model, optimizer, rows, maxGradNorm, budget, (batch, chunk) => {
    const inputs = batch.inputTensor();
    const targets = batch.targetOneHot(model.config.vocabSize);
    const weights = batch.perToken(chunk.map((r) => r.responseIndex.map(() => 1 / responseTokens)));
    const feedback = worldModelCoef > 0 && feedbackTokens > 0 ? batch.atTokens(chunk.map((r) => r.feedbackIndex), chunk.map((r) => r.feedbackIndex.map(() => worldModelCoef / feedbackTokens))) : null;
    return () => {
      const logProbs = tokenLogProbs(model.forward(inputs).logits, targets);
      const response = tf.neg(weightedTokenSum(logProbs, weights)) as tf.Scalar;
      const loss = feedback ? (tf.sub(response, weightedTokenSum(logProbs, feedback)) as tf.Scalar) : response;
      parts.push(tf.keep(loss.clone()));
      return loss;
    };
  });
  const loss = parts.reduce((sum, part) => sum + part.dataSync()[0], 0);
  tf.dispose(parts);
  return loss;
}

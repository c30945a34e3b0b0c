import type { EnvDefinition } from './envs/types';
import { CHARACTER_TOKENS, NUMBER_HISTORY_TOKENS, Tokenizer } from './policy/tokenizer';
import { ContextBuilder } from './rollout/context';
import type { JobSpec } from './spec/validate';

/**
 * The vocabulary of a job: the environment's symbols and actions, and the history's number tokens;
 * for an environment served by another process, whose text is open, single characters after them.
 */
export function tokenizerFor(definition: EnvDefinition, spec: Pick<JobSpec, 'environment' | 'rollout'>): Tokenizer {
  const extra = spec.rollout.historyFormat === 'ragen' ? NUMBER_HISTORY_TOKENS : [];
  const words = definition.vocabulary(spec.environment.config);
  return new Tokenizer(definition.served ? [...words, ...definition.actionNames, ...CHARACTER_TOKENS] : words, definition.actionNames, extra);
}

/** How the job writes its episodes into the policy's input: the context window less one response. */
export function contextsFor(tokenizer: Tokenizer, spec: Pick<JobSpec, 'model' | 'rollout'>): ContextBuilder {
  const { model, rollout } = spec;
  return new ContextBuilder(tokenizer, model.config.contextLength - rollout.maxTokensPerTurn, rollout.historyTurns, rollout.historyFormat);
}

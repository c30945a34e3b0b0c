import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { StepResult } from './types';

/** Thrown by `step()` once the episode is over: a rollout that keeps stepping is a bug, and a
 * silent no-op would hide it (or be mistaken for an invalid action and penalised). */
export class EpisodeDoneError extends Error {
  constructor(readonly envId: string) {
    super(`${envId}: step() called after the episode ended; call reset(seed) first`);
    this.name = 'EpisodeDoneError';
  }
}

/** Thrown by `step()`/`render()` before the first `reset(seed)`. */
export class EnvNotResetError extends Error {
  constructor(readonly envId: string) {
    super(`${envId}: call reset(seed) before step() or render()`);
    this.name = 'EnvNotResetError';
  }
}

/** A config that violates the environment's TypeBox schema (unknown field, out of bounds). */
export class InvalidEnvConfigError extends Error {
  constructor(
    readonly envId: string,
    readonly detail: string,
  ) {
    super(`Invalid ${envId} config: ${detail}`);
    this.name = 'InvalidEnvConfigError';
  }
}

/**
 * Fills missing fields from `defaults` and validates the result against `schema`, so an env
 * built directly (not through the registry) gets the same bounds checks.
 */
export function resolveEnvConfig<S extends TObject>(
  envId: string,
  schema: S,
  defaults: Required<Static<S>>,
  config: Partial<Static<S>> = {},
): Required<Static<S>> {
  const given = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  const merged = { ...defaults, ...given };
  const error = Value.Errors(schema, merged).First();
  if (error) throw new InvalidEnvConfigError(envId, `${error.path || '/'} ${error.message}`);
  return merged as Required<Static<S>>;
}

/** Case-insensitive, whitespace-tolerant match of an action word; the canonical name or undefined. */
export function matchAction<A extends string>(action: string, names: readonly A[]): A | undefined {
  const wanted = action.trim().toLowerCase();
  return names.find((name) => name.toLowerCase() === wanted);
}

/** The result of an action word the env does not know: nothing happens, the episode goes on. */
export function invalidActionResult(observation: string): StepResult {
  return { observation, reward: 0, done: false, info: { success: false, actionValid: false, actionEffective: false } };
}

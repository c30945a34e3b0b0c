import type { SyncEnv as Env } from '../../src/training/envs/types';

/**
 * Stepping a clone leaves the original untouched, and both see the same future under the same
 * actions (the clone carries the dynamics' random state too).
 */
export function expectIndependentClone(env: Env, actions: readonly string[]): void {
  const before = env.render();
  const copy = env.clone();
  const play = (target: Env) => actions.flatMap((action) => (target.done ? [] : [target.step(action).observation]));
  const copyFrames = play(copy);
  expect(env.render()).toBe(before);
  expect(play(env)).toEqual(copyFrames);
}

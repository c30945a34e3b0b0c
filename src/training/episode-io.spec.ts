import { contextsFor, tokenizerFor } from './episode-io';
import { getEnvDefinition } from './envs/registry';
import type { Generation } from './policy/generate';
import { SPECIAL_TOKENS, Tokenizer } from './policy/tokenizer';
import { ResponsePolicy, rollout } from './rollout/engine';
import { parseJobSpec } from './spec/validate';

/** Two actions a turn, Left then Right: the player goes back and forth and 5 turns use the 10 actions. */
class ShuttlePolicy implements ResponsePolicy {
  constructor(private readonly tokenizer: Tokenizer) {}
  respond(prompts: readonly (readonly number[])[]): Generation[] {
    return prompts.map(() => {
      const tokens = [...this.tokenizer.encode('<answer> Left || Right </answer>'), this.tokenizer.id(SPECIAL_TOKENS.eos)];
      return { tokens, logProbs: tokens.map(() => 0), entropies: tokens.map(() => 0), stopped: true };
    });
  }
}

describe('the default context window', () => {
  it.each(['sokoban', 'frozenlake'])('%s: the last prompt of a 5-turn episode holds all five observations', async (envId) => {
    const spec = parseJobSpec({ environment: { id: envId, config: envId === 'frozenlake' ? { slippery: false } : {} }, algorithm: { id: 'starpo-s' } });
    const definition = getEnvDefinition(envId);
    const tokenizer = tokenizerFor(definition, spec);
    const requests = Array.from({ length: 20 }, (_, seed) => ({ seed, group: seed, sample: 0 }));
    const episodes = await rollout(new ShuttlePolicy(tokenizer), () => definition.create(spec.environment.config), requests, tokenizer, contextsFor(tokenizer, spec), spec.rollout);
    const fiveTurns = episodes.filter((t) => t.turns.length === 5);
    expect(fiveTurns.length).toBeGreaterThan(0);
    for (const trajectory of fiveTurns) {
      const last = trajectory.turns[4].context;
      expect(last.filter((id) => id === tokenizer.id(SPECIAL_TOKENS.obs))).toHaveLength(5);
      const text = tokenizer.decode(last);
      for (const turn of trajectory.turns) expect(text).toContain(tokenizer.decode(tokenizer.encode(turn.observation.replace(/\n$/, ''))));
      // ...and the whole episode with its last response fits the model.
      expect(last.length + trajectory.turns[4].response.tokens.length).toBeLessThanOrEqual(spec.model.config.contextLength);
    }
  });
});

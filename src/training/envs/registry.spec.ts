import { Value } from '@sinclair/typebox/value';
import type { TObject, TSchema } from '@sinclair/typebox';
import { Rng } from '../random';
import { ENVIRONMENTS, getEnvDefinition, listEnvironments, UnknownEnvironmentError } from './registry';

/** Splits an observation into vocabulary tokens by longest match, spaces ignored (the Env contract). */
function tokenize(text: string, vocabulary: readonly string[]): string[] | null {
  const byLength = [...vocabulary].sort((a, b) => b.length - a.length);
  const tokens: string[] = [];
  for (let at = 0; at < text.length; ) {
    if (text[at] === ' ') {
      at++;
      continue;
    }
    const token = byLength.find((candidate) => text.startsWith(candidate, at));
    if (!token) return null;
    tokens.push(token);
    at += token.length;
  }
  return tokens;
}

describe('environment registry', () => {
  it('registers bandit, sokoban, frozenlake and lookup-qa', () => {
    expect(listEnvironments().map((definition) => definition.id)).toEqual(['bandit', 'sokoban', 'frozenlake', 'lookup-qa']);
    expect(getEnvDefinition('sokoban')).toBe(ENVIRONMENTS.sokoban);
  });

  it('throws a clear error for an unknown id', () => {
    expect(() => getEnvDefinition('chess')).toThrow(UnknownEnvironmentError);
    expect(() => getEnvDefinition('chess')).toThrow("Unknown environment 'chess'; known: bandit, sokoban, frozenlake, lookup-qa");
    expect(() => getEnvDefinition('toString')).toThrow(UnknownEnvironmentError);
  });

  it.each(Object.keys(ENVIRONMENTS))('%s: every config field is optional, documented, bounded and defaulted', (id) => {
    const { configSchema, defaults } = getEnvDefinition(id);
    const schema = configSchema as TObject;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required ?? []).toEqual([]);
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(defaults).sort());
    for (const [field, property] of Object.entries(schema.properties) as [string, TSchema][]) {
      expect([field, typeof property.description]).toEqual([field, 'string']);
      expect([field, property.default]).toEqual([field, defaults[field]]);
      if (property.type === 'number' || property.type === 'integer') {
        expect([field, typeof property.minimum, typeof property.maximum]).toEqual([field, 'number', 'number']);
      }
    }
    expect(Value.Default(configSchema, {})).toEqual(defaults);
    expect(Value.Check(configSchema, defaults)).toBe(true);
    expect(Value.Check(configSchema, { ...defaults, unknownField: 1 })).toBe(false);
  });

  it.each(Object.keys(ENVIRONMENTS))('%s: observations use only vocabulary tokens, actions only actionNames (or actionsFor)', (id) => {
    const definition = getEnvDefinition(id);
    const vocabulary = definition.vocabulary(definition.defaults);
    const configs = id === 'bandit' ? [{}, { variant: 'alt' }] : [{}];
    const rng = new Rng(9);
    const untokenizable: string[] = [];
    for (const config of configs) {
      const env = definition.create({ ...definition.defaults, ...config });
      expect(vocabulary).toEqual(expect.arrayContaining([...env.vocabulary]));
      expect(Object.keys(env.symbolLegend).every((symbol) => env.vocabulary.includes(symbol))).toBe(true);
      for (let seed = 0; seed < 30; seed++) {
        const frames = [env.reset(seed)];
        expect(definition.actionNames).toEqual(expect.arrayContaining([...env.actionNames]));
        for (let step = 0; step < 10 && !env.done; step++) {
          const actions = definition.actionsFor?.(frames[frames.length - 1]) ?? env.actionNames;
          const result = env.step(rng.pick(actions));
          if (definition.actionsFor) expect(result.info.actionValid).toBe(true);
          frames.push(result.observation);
        }
        untokenizable.push(...frames.filter((frame) => tokenize(frame, vocabulary) === null));
        const longest = Math.max(...frames.map((frame) => tokenize(frame.replace(/\n$/, ''), vocabulary)?.length ?? 0));
        expect(longest).toBeLessThanOrEqual(definition.observationTokens({ ...definition.defaults, ...config }));
      }
    }
    expect(untokenizable).toEqual([]);
  });

  it('create() fills missing fields from the defaults and rejects out-of-bounds values', () => {
    const frozenlake = getEnvDefinition('frozenlake');
    expect(frozenlake.create({ size: 5 }).reset(0).split('\n')).toHaveLength(5);
    expect(() => frozenlake.create({ size: 2 })).toThrow(/size/);
    expect(getEnvDefinition('bandit').expert).toBeUndefined();
    expect(getEnvDefinition('sokoban').expert).toBeDefined();
    expect(getEnvDefinition('lookup-qa').expert).toBeDefined();
    expect(() => getEnvDefinition('lookup-qa').create({ maxHops: 3, maxToolCalls: 2 })).toThrow(/maxToolCalls/);
  });
});

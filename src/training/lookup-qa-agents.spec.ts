import { LookupQaEnv, parseToolCall } from './envs/lookup-qa';
import { getEnvDefinition } from './envs/registry';
import { contextsFor, tokenizerFor } from './episode-io';
import { evaluate } from './evaluate';
import { RandomFormatPolicy } from './policy/policy';
import { SPECIAL_TOKENS } from './policy/tokenizer';
import { Rng } from './random';
import { parseResponse } from './rollout/parse';
import { parseJobSpec } from './spec/validate';
import { scriptedExamples } from './warmup';

const spec = parseJobSpec({ environment: { id: 'lookup-qa' }, algorithm: { id: 'starpo-s' } });
const definition = getEnvDefinition('lookup-qa');
const tokenizer = tokenizerFor(definition, spec);
const contexts = contextsFor(tokenizer, spec);

/** The responses of packed warm-up rows, as text, one entry per turn. */
async function warmupResponses(kind: 'format' | 'demonstrations', count: number, rollout = spec.rollout): Promise<string[]> {
  let seed = 0;
  const rows = await scriptedExamples(kind, definition, spec.environment.config, rollout, tokenizer, contexts, new Rng(3), () => seed++, count);
  const eos = tokenizer.id(SPECIAL_TOKENS.eos);
  return rows.flatMap((row) => {
    const texts: string[] = [];
    let current: number[] = [];
    for (const index of row.responseIndex) {
      if (row.tokens[index] === eos) {
        texts.push(tokenizer.decode(current));
        current = [];
      } else current.push(row.tokens[index]);
    }
    return texts;
  });
}

describe('lookup-qa with the job machinery', () => {
  it('gets one call per turn and the demonstrations warm-up by default', () => {
    expect(spec.rollout).toMatchObject({ maxTurns: 5, maxActionsPerTurn: 1, maxActionsPerEpisode: 5, think: false });
    expect(spec.training.warmup.kind).toBe('demonstrations');
  });

  it('the random agent writes only well-formed calls that name entities it was shown', async () => {
    const random = new RandomFormatPolicy(tokenizer, RandomFormatPolicy.environmentActions(tokenizer, definition), spec.rollout.maxActionsPerTurn, spec.rollout.think, new Rng(7));
    const result = await evaluate(random, definition, spec.environment.config, spec.rollout, tokenizer, contexts, 64);
    const turns = result.trajectories.flatMap((t) => t.turns);
    expect(result.formatValid).toBe(1);
    expect(turns.every((turn) => turn.invalidActions === 0 && turn.executed.every((action) => parseToolCall(action)?.argument != null))).toBe(true);
    // Each turn's call names an entity its observation showed.
    expect(turns.every((turn) => turn.observation.includes(parseToolCall(turn.executed[0])!.argument!))).toBe(true);
    expect(result.success).toBeGreaterThan(0);
    expect(result.success).toBeLessThan(0.3);
  });

  it('the format warm-up teaches random well-formed calls, the demonstrations the expert’s chain', async () => {
    const format = await warmupResponses('format', 60);
    expect(format).toHaveLength(60);
    for (const text of format) {
      const parsed = parseResponse(text, false);
      expect([text, parsed.formatValid, parsed.actions.length]).toEqual([text, true, 1]);
      expect([text, parseToolCall(parsed.actions[0])?.argument]).toEqual([text, expect.any(String)]);
    }
    const demonstrations = await warmupResponses('demonstrations', 200);
    const calls = demonstrations.map((text) => parseToolCall(parseResponse(text, false).actions[0])!);
    // Every episode ends with its answer; 1–3 searches lead to it.
    expect(calls.filter((call) => call.tool === 'answer').length).toBeGreaterThan(200 / 4 - 1);
    const env = new LookupQaEnv();
    env.reset(0);
    const { chain } = env.state.graph.question;
    expect(demonstrations.slice(0, chain.length)).toEqual([...chain.slice(0, -1).map((name) => `<answer> search[ ${name} ] </answer>`), `<answer> answer[ ${chain[chain.length - 1]} ] </answer>`]);
  });

  it('with <think>, the demonstrations think the expert’s thought and the format warm-up free thought tokens', async () => {
    const thinking = { ...spec.rollout, think: true, maxTokensPerTurn: 24 };
    const env = new LookupQaEnv();
    env.reset(0);
    const { chain, relations } = env.state.graph.question;
    const thoughts = [`${chain[0]} ${relations[0]}`, ...relations.map((relation, hop) => [relation, chain[hop + 1], ...(relations[hop + 1] ? [relations[hop + 1]] : [])].join(' '))];
    const demonstrations = await warmupResponses('demonstrations', chain.length, thinking);
    expect(demonstrations).toEqual(thoughts.map((thought, turn) => `<think> ${thought} </think> <answer> ${turn < relations.length ? 'search' : 'answer'}[ ${chain[turn]} ] </answer>`));
    const format = await warmupResponses('format', 20, thinking);
    expect(format.every((text) => /^<think>( t\d)+ <\/think> <answer> /.test(text))).toBe(true);
  });
});

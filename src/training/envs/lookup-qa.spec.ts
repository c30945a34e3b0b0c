import { BanditEnv } from './bandit';
import { NUMBER_HISTORY_TOKENS, SPECIAL_TOKENS, Tokenizer } from '../policy/tokenizer';
import { ContextBuilder } from '../rollout/context';
import { ResponsePolicy, rollout } from '../rollout/engine';
import { Rng } from '../random';
import { InvalidEnvConfigError } from './common';
import { lookupQaExpert, lookupQaExpertThought } from './experts';
import { LOOKUP_QA_DEFAULTS, LOOKUP_QA_VOCABULARY, LookupQaEnv, lookupQaActionsFor, lookupQaObservationTokens, lookupQaToolCalls, type LookupQaConfig, parseToolCall } from './lookup-qa';
import { ENTITY_POOL, type Fact, type LookupGraph, followRelations } from './lookup-qa-graph';
import { getEnvDefinition } from './registry';
import { toolMetrics } from '../signals/tool-metrics';

const facts = (entries: Record<string, [string, string][]>): Map<string, Fact[]> =>
  new Map(Object.entries(entries).map(([subject, list]) => [subject, list.map(([relation, object]) => ({ relation, object }))]));

/** Zorvek's rival is Brask, Brask's mentor is Quillan: "mentor of rival of Zorvek" is Quillan. */
const HAND_GRAPH: LookupGraph = {
  facts: facts({
    Zorvek: [['rival', 'Brask'], ['ally', 'Velka']],
    Brask: [['mentor', 'Quillan'], ['rival', 'Zorvek']],
    Velka: [['mentor', 'Brask'], ['ally', 'Quillan']],
    Quillan: [['heir', 'Velka'], ['maker', 'Zorvek']],
  }),
  question: { relations: ['rival', 'mentor'], chain: ['Zorvek', 'Brask', 'Quillan'] },
};

/**
 * An agent that knows nothing but what the tools return: it reads the question, searches the
 * start, reads the fact the next relation names in the result, and so on, then answers.
 */
function solveFromObservations(env: LookupQaEnv, seed: number): { searches: number; reward: number; success: boolean } {
  const question = /^Q : (.*) \?$/.exec(env.reset(seed).split('\n')[0])![1].split(' of ');
  let at = question.pop()!;
  let searches = 0;
  for (const relation of question.reverse()) {
    const line = env.step(`search[${at}]`).observation.split('\n')[1];
    searches++;
    const listed = line.slice(line.indexOf(' : ') + 3).split(' , ').map((fact) => fact.split(' '));
    at = listed.find(([name]) => name === relation)![1];
  }
  const result = env.step(`answer[${at}]`);
  return { searches, reward: result.reward, success: result.info.success };
}

const CONFIGS: Partial<LookupQaConfig>[] = [
  {},
  { graphSize: 4, distractors: 0 },
  { graphSize: 32, distractors: 5 },
  { minHops: 3, maxHops: 3, maxToolCalls: 3 },
  { minHops: 1, maxHops: 1, graphSize: 5 },
];

describe('lookup-qa', () => {
  it('renders the question and, after a search, exactly the searched entity’s facts in graph order', () => {
    const env = new LookupQaEnv();
    expect(env.resetToGraph(HAND_GRAPH)).toBe('Q : mentor of rival of Zorvek ?');
    expect(env.step('search[Brask]').observation).toBe('Q : mentor of rival of Zorvek ?\nsearch[ Brask ] : mentor Quillan , rival Zorvek');
    // In the pool but not in this graph; then not a pool name at all.
    expect(env.step('search[ Nivak ]').observation.split('\n')[1]).toBe('search[ Nivak ] : no result');
    expect(env.step('search[rival]').observation.split('\n')[1]).toBe('search[ ? ] : no result');
    expect(env.state.searched).toEqual(['Brask']);
  });

  it('tools return exactly the graph’s facts on generated graphs (every entity of 50 seeds)', () => {
    const env = new LookupQaEnv({ distractors: 3 });
    const mismatches: string[] = [];
    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      const graph = env.state.graph;
      for (const [subject, list] of graph.facts) {
        const probe = env.clone();
        const line = probe.step(`search[${subject}]`).observation.split('\n')[1];
        const expected = `search[ ${subject} ] : ${list.map((f) => `${f.relation} ${f.object}`).join(' , ')}`;
        if (line !== expected || list.length !== 4 || new Set(list.map((f) => f.relation)).size !== 4) mismatches.push(`${seed}:${subject}`);
      }
      for (const name of ENTITY_POOL.filter((n) => !graph.facts.has(n)).slice(0, 3)) {
        if (env.clone().step(`search[${name}]`).observation.split('\n')[1] !== `search[ ${name} ] : no result`) mismatches.push(`${seed}:${name}`);
      }
      expect(graph.facts.size).toBe(12);
    }
    expect(mismatches).toEqual([]);
  });

  it('every question is answerable from the tools’ answers within its hop count (1000 seeds per config)', () => {
    const failures: string[] = [];
    for (const config of CONFIGS) {
      const env = new LookupQaEnv(config);
      const { minHops, maxHops, maxToolCalls } = env.config;
      const seen = new Set<number>();
      for (let seed = 0; seed < 1000; seed++) {
        const outcome = solveFromObservations(env, seed);
        const { chain, relations } = env.state.graph.question;
        const hops = relations.length;
        seen.add(hops);
        const distinct = new Set(chain).size === hops + 1;
        const follows = followRelations(env.state.graph.facts, chain[0], relations) === chain[hops];
        const ok = outcome.success && outcome.reward === 1 && outcome.searches === hops && hops >= minHops && hops <= maxHops && hops <= maxToolCalls;
        if (!ok || !distinct || !follows) failures.push(`${JSON.stringify(config)} seed ${seed}`);
      }
      expect([config, [...seen].sort()]).toEqual([config, Array.from({ length: maxHops - minHops + 1 }, (_, i) => minHops + i)]);
    }
    expect(failures).toEqual([]);
  });

  it('a scripted episode earns exactly its hand-computed rewards', () => {
    const env = new LookupQaEnv();
    env.resetToGraph(HAND_GRAPH);
    const script = ['Up', 'search[Brask', 'search[ Zorvek ]', 'search[Nivak]', 'search[Brask]', 'answer[ quillan ]'];
    const results = script.map((action) => env.step(action));
    expect(results.map((r) => r.reward)).toEqual([0, -0.1, 0, 0, 0, 1]);
    expect(results.map((r) => r.info.actionValid)).toEqual([false, true, true, true, true, true]);
    expect(results.map((r) => r.info.actionEffective)).toEqual([false, false, true, false, true, true]);
    expect(results.map((r) => r.done)).toEqual([false, false, false, false, false, true]);
    expect(results[1].observation.split('\n')[1]).toBe('malformed call');
    expect(results[5]).toMatchObject({ observation: 'Q : mentor of rival of Zorvek ?\nanswer[ Quillan ] : correct', info: { success: true } });
    // 0 − 0.1 + 0 + 0 + 0 + 1
    expect(results.reduce((sum, r) => sum + r.reward, 0)).toBeCloseTo(0.9, 12);
    expect(env.state.calls).toBe(4);
    expect(() => env.step('search[Brask]')).toThrow(/episode ended/);
  });

  it('a wrong answer ends with 0; the call after the cap ends the episode unanswered', () => {
    const wrong = new LookupQaEnv();
    wrong.resetToGraph(HAND_GRAPH);
    expect(wrong.step('answer[Brask]')).toMatchObject({ reward: 0, done: true, info: { success: false, actionValid: true } });
    expect(wrong.render().split('\n')[1]).toBe('answer[ Brask ] : wrong');

    const capped = new LookupQaEnv({ maxHops: 2, maxToolCalls: 2, malformedPenalty: 0.25 });
    capped.resetToGraph(HAND_GRAPH);
    const results = ['search[Zorvek]', 'answer[]', 'search[Brask]'].map((action) => capped.step(action));
    // The malformed answer counts as the second call, so the third call is over the cap.
    expect(results.map((r) => r.reward)).toEqual([0, -0.25, 0]);
    expect(results.map((r) => r.done)).toEqual([false, false, true]);
    expect(results[2].observation.split('\n')[1]).toBe('call limit');
    expect(capped.state.answered).toBeNull();
  });

  it('parses tool calls: spaces and case inside the brackets, malformed calls, non-calls', () => {
    expect(parseToolCall(' search[ Zorvek ] ')).toEqual({ tool: 'search', argument: 'Zorvek' });
    expect(parseToolCall('ANSWER[brask]')).toEqual({ tool: 'answer', argument: 'brask' });
    for (const malformed of ['search', 'search[', 'search[]', 'answer[ Zorvek Brask ]', 'search[Zorvek', 'search[ search[ Zorvek ] ]', 'answer[ Brask ] ]']) {
      expect([malformed, parseToolCall(malformed)?.argument]).toEqual([malformed, null]);
    }
    expect(parseToolCall('Up')).toBeNull();
    expect(parseToolCall('researcher[Zorvek]')).toBeNull();
    expect(parseToolCall('searching')).toBeNull();
  });

  it('is deterministic per seed, and seeds draw different graphs', () => {
    const a = new LookupQaEnv();
    const b = new LookupQaEnv();
    const questions = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const first = [a.reset(seed), ...lookupQaExpert(a).map((action) => a.step(action).observation)];
      const second = [b.reset(seed), ...lookupQaExpert(b).map((action) => b.step(action).observation)];
      expect(second).toEqual(first);
      expect(b.state.graph.facts).toEqual(a.state.graph.facts);
      questions.add(first[0]);
    }
    expect(questions.size).toBeGreaterThan(35);
  });

  it('clone() continues from the same state and is independent of the original', () => {
    const env = new LookupQaEnv();
    env.reset(7);
    const start = env.state.graph.question.chain[0];
    env.step(`search[${start}]`);
    const copy = env.clone();
    expect(copy.render()).toBe(env.render());
    copy.step('search[]');
    copy.step(`answer[${start}]`);
    expect([copy.done, copy.state.calls]).toEqual([true, 2]);
    expect([env.done, env.state.calls, env.state.feedback]).toEqual([false, 1, env.render().split('\n')[1]]);
    // Both continue identically under the same actions.
    const twin = env.clone();
    const plan = lookupQaExpert(env);
    expect(plan.map((action) => twin.step(action))).toEqual(plan.map((action) => env.step(action)));
  });

  it('the expert solves every seed within the cap with the shortest chain, and re-plans after a detour', () => {
    const failures: string[] = [];
    for (const config of CONFIGS) {
      const env = new LookupQaEnv(config);
      for (let seed = 0; seed < 1000; seed++) {
        env.reset(seed);
        const hops = env.state.graph.question.relations.length;
        const plan = lookupQaExpert(env);
        const rewards = plan.map((action) => env.step(action).reward);
        const total = rewards.reduce((a, b) => a + b, 0);
        if (plan.length !== hops + 1 || total !== 1 || !env.done || env.state.calls !== hops || env.state.calls > env.config.maxToolCalls) {
          failures.push(`${JSON.stringify(config)} seed ${seed}`);
        }
      }
    }
    expect(failures).toEqual([]);
    const env = new LookupQaEnv({ minHops: 3 });
    env.reset(3);
    const chain = env.state.graph.question.chain;
    env.step(`search[${chain[0]}]`);
    env.step('search[Nivak]');
    expect(lookupQaExpert(env)).toEqual([`search[${chain[1]}]`, `search[${chain[2]}]`, `answer[${chain[3]}]`]);
    env.step(lookupQaExpert(env)[0]);
    expect(lookupQaExpert(env)).toHaveLength(2);
  });

  it('the expert thinks the relation just followed, where it led and the next relation to follow', () => {
    const env = new LookupQaEnv();
    env.resetToGraph(HAND_GRAPH);
    // "mentor of rival of Zorvek ?": the start and its first relation, before any search.
    expect(lookupQaExpertThought(env)).toBe('Zorvek rival');
    // A detour (Velka is not on the chain) leaves the expert where it was.
    env.step('search[Velka]');
    expect(lookupQaExpertThought(env)).toBe('Zorvek rival');
    env.step('search[Zorvek]');
    expect(lookupQaExpertThought(env)).toBe('rival Brask mentor');
    env.step('search[Brask]');
    // The last hop: no relation after it, and the expert's call is the answer it names.
    expect([lookupQaExpertThought(env), lookupQaExpert(env)]).toEqual(['mentor Quillan', ['answer[Quillan]']]);
    env.step('answer[Quillan]');
    expect(lookupQaExpertThought(env)).toBeNull();
    expect(() => lookupQaExpertThought(new BanditEnv())).toThrow(TypeError);
  });

  it('bounds an observation: the longest question, then a full search result', () => {
    // Q : (r of)×3 e ?  then  \n search[ e ] : (r e ,)×3 less the last comma
    expect(lookupQaObservationTokens(LOOKUP_QA_DEFAULTS)).toBe(2 + 2 * 3 + 2 + (1 + 3 + 1 + 3 * 3 - 1));
    const env = new LookupQaEnv({ minHops: 3 });
    env.reset(0);
    const tokenizer = new Tokenizer(LOOKUP_QA_VOCABULARY, []);
    expect(tokenizer.encode(env.step(`search[${env.state.graph.question.chain[0]}]`).observation)).toHaveLength(23);
  });

  it('rejects configs whose questions could not be answered', () => {
    expect(() => new LookupQaEnv({ minHops: 3, maxHops: 2 })).toThrow(InvalidEnvConfigError);
    expect(() => new LookupQaEnv({ maxHops: 3, maxToolCalls: 2 })).toThrow(/maxToolCalls/);
    expect(() => new LookupQaEnv({ graphSize: 3 })).toThrow(/graphSize/);
    expect(() => new LookupQaEnv({ distractors: 6 })).toThrow(/distractors/);
  });

  it('random well-formed actions come from the entities shown and all encode in the job vocabulary', () => {
    const definition = getEnvDefinition('lookup-qa');
    const tokenizer = new Tokenizer(definition.vocabulary(LOOKUP_QA_DEFAULTS), definition.actionNames);
    expect(lookupQaActionsFor('Q : mentor of rival of Zorvek ?')).toEqual(['search[Zorvek]', 'answer[Zorvek]']);
    expect(lookupQaActionsFor(tokenizer.decode(tokenizer.encode('Q : ally of Zorvek ?\nsearch[ Zorvek ] : ally Brask , rival Zorvek')))).toEqual([
      'search[Zorvek]', 'answer[Zorvek]', 'search[Brask]', 'answer[Brask]',
    ]);
    const env = new LookupQaEnv();
    const rng = new Rng(5);
    const unk = tokenizer.id(SPECIAL_TOKENS.unk);
    for (let seed = 0; seed < 50; seed++) {
      let observation = env.reset(seed);
      while (!env.done) {
        const action = rng.pick(lookupQaActionsFor(observation));
        const ids = tokenizer.encode(action);
        expect([action, ids.includes(unk), ids.length]).toEqual([action, false, 3]);
        const result = env.step(tokenizer.decode(ids));
        expect(result.info.actionValid).toBe(true);
        expect(result.reward).toBeGreaterThanOrEqual(0);
        observation = result.observation;
      }
    }
    // No entity name begins a longer vocabulary word, so `search[Zorvek]` splits the same with or without spaces.
    const clashes = ENTITY_POOL.filter((name) => LOOKUP_QA_VOCABULARY.some((word) => word !== name && word.startsWith(name)));
    expect(clashes).toEqual([]);
  });

  it('the rollout engine carries `search[x]` from a response to env.step, one engine for tools', async () => {
    const definition = getEnvDefinition('lookup-qa');
    const tokenizer = new Tokenizer(definition.vocabulary(LOOKUP_QA_DEFAULTS), definition.actionNames, NUMBER_HISTORY_TOKENS);
    const contexts = new ContextBuilder(tokenizer, 400, 10, 'ragen');
    const script = ['<answer> search[ Zorvek ] </answer>', '<answer> search[Brask] || answer[Velka] </answer>', '<answer> search </answer>', '<answer> answer[ Quillan ] </answer>'];
    const seen: string[] = [];
    const policy: ResponsePolicy = {
      respond: (prompts) =>
        prompts.map((prompt) => {
          seen.push(tokenizer.decode(prompt));
          const tokens = [...tokenizer.encode(script[seen.length - 1]), tokenizer.id('<eos>')];
          return { tokens, logProbs: tokens.map(() => 0), entropies: tokens.map(() => 0), stopped: true };
        }),
    };
    const makeEnv = () => {
      const env = new LookupQaEnv();
      env.reset = () => env.resetToGraph(HAND_GRAPH);
      return env;
    };
    const settings = { maxTurns: 5, maxActionsPerTurn: 1, maxActionsPerEpisode: 5, temperature: 1, maxTokensPerTurn: 16, think: false, formatPenalty: -0.1 };
    const [trajectory] = await rollout(policy, makeEnv, [{ seed: 0, group: 0, sample: 0 }], tokenizer, contexts, settings);
    expect(trajectory.turns.map((t) => t.executed)).toEqual([['search[ Zorvek ]'], ['search[ Brask ]'], ['search'], ['answer[ Quillan ]']]);
    // The malformed call costs the env's 0.1; the answer pays 1: 0 + 0 − 0.1 + 1.
    expect(trajectory.turns.map((t) => t.reward)).toEqual([0, 0, -0.1, 1]);
    expect(trajectory.return).toBeCloseTo(0.9, 12);
    expect([trajectory.success, trajectory.terminated, trajectory.formatErrors]).toEqual([true, true, 0]);
    // The second turn's context shows the first search's result.
    expect(seen[1]).toContain('search[ Zorvek ] : rival Brask , ally Velka');
    // Four calls: two searches and the answer ran, the malformed `search` did not.
    const metrics = toolMetrics([trajectory], (actions) => definition.toolCalls!(LOOKUP_QA_DEFAULTS, actions));
    expect(metrics).toEqual({ 'tools/calls_per_episode': 4, 'tools/success_rate': 3 / 4 });
  });
});

describe('lookupQaToolCalls: which executed actions were tool calls the tools ran', () => {
  const config = { ...LOOKUP_QA_DEFAULTS, maxHops: 2, maxToolCalls: 2 };

  it('counts a search of an entity without facts as run, a malformed call and the call past the cap as failed', () => {
    // search[Nobody] runs (no result), search[ is malformed, the third search is past the cap of 2.
    expect(lookupQaToolCalls(config, ['search[Nobody]', 'search[', 'search[Zorvek]'])).toEqual({ calls: 3, succeeded: 1 });
  });

  it('counts a well-formed answer as run whatever the cap, and nothing after it', () => {
    expect(lookupQaToolCalls(config, ['search[Zorvek]', 'search[Brask]', 'answer[Quillan]', 'search[Velka]'])).toEqual({ calls: 3, succeeded: 3 });
  });

  it('ignores text that names no tool', () => {
    expect(lookupQaToolCalls(config, ['Up', 'answer[Brask]'])).toEqual({ calls: 1, succeeded: 1 });
  });

  it('agrees with the environment: a call ran when its feedback is neither malformed nor the call limit', () => {
    const rng = new Rng(5);
    const words = ['search[Zorvek]', 'search[Brask]', 'search[Nobody]', 'search[', 'answer[', 'answer[Quillan]', 'answer[Velka]'];
    for (let episode = 0; episode < 200; episode++) {
      const env = new LookupQaEnv(config);
      env.resetToGraph(HAND_GRAPH);
      const actions: string[] = [];
      let ran = 0;
      while (!env.done && actions.length < 6) {
        const action = words[rng.int(words.length)];
        actions.push(action);
        const feedback = env.step(action).observation.split('\n')[1];
        if (feedback !== 'malformed call' && feedback !== 'call limit') ran++;
      }
      expect(lookupQaToolCalls(config, actions)).toEqual({ calls: actions.length, succeeded: ran });
    }
  });
});

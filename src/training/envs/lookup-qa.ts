import { Type, type Static } from '@sinclair/typebox';
import { Rng } from '../random';
import { EnvNotResetError, EpisodeDoneError, InvalidEnvConfigError, invalidActionResult, resolveEnvConfig } from './common';
import { ENTITY_POOL, type LookupGraph, RELATION_POOL, generateLookupGraph } from './lookup-qa-graph';
import type { Env, StepResult } from './types';

/** TypeBox schema of the lookup-qa config: difficulty is hops, distractor facts, graph size and the call cap. */
export const LookupQaConfigSchema = Type.Object(
  {
    graphSize: Type.Optional(
      Type.Integer({ default: 12, minimum: 4, maximum: ENTITY_POOL.length, description: 'Entities in the graph, drawn from a fixed pool of invented names' }),
    ),
    minHops: Type.Optional(Type.Integer({ default: 1, minimum: 1, maximum: 3, description: 'Fewest facts a question chains (drawn uniformly in minHops..maxHops)' })),
    maxHops: Type.Optional(Type.Integer({ default: 3, minimum: 1, maximum: 3, description: 'Most facts a question chains; at least minHops, at most maxToolCalls' })),
    distractors: Type.Optional(
      Type.Integer({
        default: 2,
        minimum: 0,
        maximum: RELATION_POOL.length - 1,
        description: 'Facts each entity has beside the one a question may follow (a search returns 1 + distractors facts)',
      }),
    ),
    maxToolCalls: Type.Optional(
      Type.Integer({ default: 4, minimum: 1, maximum: 9, description: 'Searches (and malformed calls) allowed; the next one ends the episode unanswered' }),
    ),
    malformedPenalty: Type.Optional(
      Type.Number({ default: 0.1, minimum: 0, maximum: 1, description: 'Subtracted for a malformed tool call (e.g. search[] or a missing bracket)' }),
    ),
  },
  { additionalProperties: false },
);

/** A complete lookup-qa config (every field resolved). */
export type LookupQaConfig = Required<Static<typeof LookupQaConfigSchema>>;

/** Defaults: 12 entities with 3 facts each, questions of 1–3 hops, 4 searches. */
export const LOOKUP_QA_DEFAULTS: LookupQaConfig = { graphSize: 12, minHops: 1, maxHops: 3, distractors: 2, maxToolCalls: 4, malformedPenalty: 0.1 };

/** The tools; an action is `search[entity]` or `answer[entity]`. */
export const LOOKUP_QA_TOOLS = ['search', 'answer'] as const;

/** Observation words beside the relation and entity names. */
const STRUCTURE_LEGEND: Readonly<Record<string, string>> = {
  Q: 'the question follows',
  of: 'relation of: "mentor of rival of X ?" is the mentor of the rival of X',
  '?': 'ends the question; also stands for an argument that names no entity',
  ':': 'separator',
  ',': 'separates facts',
  'search[': "search[entity]: that entity's facts come back as the next observation",
  'answer[': 'answer[entity]: the final answer, ends the episode',
  ']': 'closes a tool call',
  no: 'with result: the entity searched for has no facts',
  result: 'with no: the entity searched for has no facts',
  correct: 'the answer was right',
  wrong: 'the answer was wrong',
  malformed: 'with call: the last tool call was malformed',
  call: 'with malformed: a malformed call; with limit: the tool-call cap was exceeded',
  limit: 'with call: the tool-call cap was exceeded, the episode ended unanswered',
};

export const LOOKUP_QA_LEGEND: Readonly<Record<string, string>> = {
  ...STRUCTURE_LEGEND,
  ...Object.fromEntries(RELATION_POOL.map((relation) => [relation, 'a relation'])),
  ...Object.fromEntries(ENTITY_POOL.map((name) => [name, 'an invented entity'])),
};

/** Every observation token, for every seed and config. */
export const LOOKUP_QA_VOCABULARY: readonly string[] = [...Object.keys(LOOKUP_QA_LEGEND), '\n'];

/** Most tokens one observation takes: the question line, then the longest feedback line (a full search result). */
export function lookupQaObservationTokens(config: LookupQaConfig): number {
  const question = 2 + 2 * config.maxHops + 2; // Q : (r of)… e ?
  const facts = 1 + config.distractors;
  const feedback = 1 + 3 + 1 + 3 * facts - 1; // \n search[ e ] : (r e ,)… without the last comma
  return question + feedback;
}

/** A tool call as the env reads it; `argument` is null when the call is malformed. */
interface ToolCall {
  tool: (typeof LOOKUP_QA_TOOLS)[number];
  argument: string | null;
}

const WELL_FORMED = /^(search|answer)\s*\[\s*([^\s[\]]+)\s*\]$/i;
const NAMES_A_TOOL = /^(search|answer)(?![a-z])/i;
const GRAPH_STREAM = 301;

/**
 * `search[e]` / `answer[e]` (spaces inside the brackets allowed, as decoded responses have them,
 * names matched case-insensitively); a text that names a tool but is not such a call is a
 * malformed call; anything else is not a tool call at all (null).
 */
export function parseToolCall(action: string): ToolCall | null {
  const text = action.trim();
  const match = WELL_FORMED.exec(text);
  if (match) return { tool: match[1].toLowerCase() as ToolCall['tool'], argument: match[2] };
  const named = NAMES_A_TOOL.exec(text);
  return named ? { tool: named[1].toLowerCase() as ToolCall['tool'], argument: null } : null;
}

/**
 * Of an episode's executed actions, the tool calls and how many the tools ran: a well-formed
 * `answer[e]`, or a well-formed `search[e]` within `maxToolCalls` (an entity without facts still
 * ran: its result is `no result`). A malformed call and the call past the cap fail. Replays the
 * same rules as `step`, so it needs only the actions.
 */
export function lookupQaToolCalls(config: LookupQaConfig, actions: readonly string[]): { calls: number; succeeded: number } {
  let calls = 0;
  let succeeded = 0;
  let counted = 0; // searches and malformed calls, as `LookupQaState.calls` counts them
  for (const action of actions) {
    const call = parseToolCall(action);
    if (call === null) continue;
    calls++;
    if (call.tool === 'answer' && call.argument !== null) {
      succeeded++;
      break;
    }
    if (counted >= config.maxToolCalls) break;
    counted++;
    if (call.argument !== null) succeeded++;
  }
  return { calls, succeeded };
}

/** The pool name an argument means (case-insensitive), or undefined. */
function poolName(argument: string): string | undefined {
  const wanted = argument.toLowerCase();
  return ENTITY_POOL.find((name) => name.toLowerCase() === wanted);
}

/**
 * Random well-formed actions for an agent that reads `observation`: `search[e]` and `answer[e]`
 * for every entity the observation names (the whole pool when it names none, e.g. a cut context).
 */
export function lookupQaActionsFor(observation: string): string[] {
  const pool = new Set(ENTITY_POOL);
  const shown = [...new Set(observation.split(/[\s[\],:?]+/).filter((word) => pool.has(word)))];
  return (shown.length > 0 ? shown : ENTITY_POOL).flatMap((name) => [`search[${name}]`, `answer[${name}]`]);
}

/** Where an episode stands. Immutable: `step` replaces it, so `clone()` can share it. */
export interface LookupQaState {
  readonly graph: LookupGraph;
  /** Searches and malformed calls made so far. */
  readonly calls: number;
  /** Graph entities searched so far, in order. */
  readonly searched: readonly string[];
  /** The feedback line of the last call ('' before any). */
  readonly feedback: string;
  readonly answered: string | null;
  readonly over: boolean;
}

/**
 * A tool-use question-answering environment: a seed draws a small graph of invented entities
 * and a question that chains 1–3 of its facts ("Q : mentor of rival of Zorvek ?"). The agent
 * sees only the question; `search[e]` shows e's facts in the next observation
 * ("search[ Zorvek ] : rival Brask , ally Velka"), an entity without facts gives `no result`,
 * and `answer[e]` ends the episode: reward 1 and success when e is the answer, else 0.
 * A malformed call (the tool named, no well-formed `[entity]`) costs `malformedPenalty` and
 * counts as a call; the call after `maxToolCalls` ends the episode unanswered (reward 0).
 * Text that names no tool is not an action (actionValid false, reward 0).
 *
 * The dynamics draw nothing after `reset`, so `clone()` only copies the (immutable) state.
 */
export class LookupQaEnv implements Env {
  readonly id = 'lookup-qa';
  readonly actionNames = LOOKUP_QA_TOOLS;
  readonly symbolLegend = LOOKUP_QA_LEGEND;
  readonly vocabulary = LOOKUP_QA_VOCABULARY;
  readonly config: LookupQaConfig;
  private episode: LookupQaState | null = null;

  constructor(config: Partial<LookupQaConfig> = {}) {
    this.config = resolveEnvConfig('lookup-qa', LookupQaConfigSchema, LOOKUP_QA_DEFAULTS, config);
    const { minHops, maxHops, maxToolCalls } = this.config;
    if (minHops > maxHops) throw new InvalidEnvConfigError(this.id, `/minHops must be <= maxHops (${maxHops})`);
    if (maxHops > maxToolCalls) throw new InvalidEnvConfigError(this.id, `/maxHops must be <= maxToolCalls (${maxToolCalls}), or questions are unanswerable`);
  }

  get state(): LookupQaState {
    if (!this.episode) throw new EnvNotResetError(this.id);
    return this.episode;
  }

  get done(): boolean {
    return this.episode?.over ?? false;
  }

  reset(seed: number): string {
    const { graphSize, distractors, minHops, maxHops } = this.config;
    return this.resetToGraph(generateLookupGraph({ entities: graphSize, factsPerEntity: 1 + distractors, minHops, maxHops }, new Rng(seed, GRAPH_STREAM)));
  }

  /** Starts an episode on a given graph and question (hand-made cases in tests). */
  resetToGraph(graph: LookupGraph): string {
    this.episode = { graph, calls: 0, searched: [], feedback: '', answered: null, over: false };
    return this.render();
  }

  step(action: string): StepResult {
    const episode = this.state;
    if (episode.over) throw new EpisodeDoneError(this.id);
    const call = parseToolCall(action);
    if (call === null) return invalidActionResult(this.render());
    if (call.tool === 'answer' && call.argument !== null) return this.answer(episode, call.argument);
    if (episode.calls >= this.config.maxToolCalls) {
      return this.next({ ...episode, calls: episode.calls + 1, feedback: 'call limit', over: true }, 0, false);
    }
    if (call.argument === null) {
      return this.next({ ...episode, calls: episode.calls + 1, feedback: 'malformed call' }, -this.config.malformedPenalty, false);
    }
    const name = poolName(call.argument);
    const facts = name === undefined ? undefined : episode.graph.facts.get(name);
    const listed = facts ? facts.map((fact) => `${fact.relation} ${fact.object}`).join(' , ') : 'no result';
    const searched = facts ? [...episode.searched, name!] : episode.searched;
    return this.next({ ...episode, calls: episode.calls + 1, searched, feedback: `search[ ${name ?? '?'} ] : ${listed}` }, 0, facts !== undefined);
  }

  render(): string {
    const { graph, feedback } = this.state;
    const { relations, chain } = graph.question;
    const asked = [...relations].reverse().map((relation) => `${relation} of`);
    const question = `Q : ${[...asked, chain[0]].join(' ')} ?`;
    return feedback ? `${question}\n${feedback}` : question;
  }

  clone(): LookupQaEnv {
    const copy = new LookupQaEnv(this.config);
    copy.episode = this.episode;
    return copy;
  }

  private answer(episode: LookupQaState, argument: string): StepResult {
    const name = poolName(argument);
    const chain = episode.graph.question.chain;
    const success = name === chain[chain.length - 1];
    const feedback = `answer[ ${name ?? '?'} ] : ${success ? 'correct' : 'wrong'}`;
    return this.next({ ...episode, answered: name ?? argument, feedback, over: true }, success ? 1 : 0, true, success);
  }

  private next(state: LookupQaState, reward: number, effective: boolean, success = false): StepResult {
    this.episode = state;
    return { observation: this.render(), reward, done: state.over, info: { success, actionValid: true, actionEffective: effective } };
  }
}

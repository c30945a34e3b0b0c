/** A response split into its reasoning and its actions (docs/training.md, "Turns and parsing"). */
export interface ParsedResponse {
  /** The whole response matched the required format and the answer named at least one action. */
  formatValid: boolean;
  think: string | null;
  answer: string | null;
  /** Actions in the answer, `||`-separated and trimmed, in order (before any budget). */
  actions: string[];
}

const WITH_THINK = /^\s*<think>([\s\S]*?)<\/think>\s*<answer>([\s\S]*?)<\/answer>\s*$/;
const ANSWER_ONLY = /^\s*<answer>([\s\S]*?)<\/answer>\s*$/;

/**
 * RAGEN's response format: `<think>…</think><answer>a1 || a2</answer>` (or only the answer when
 * thinking is off). The whole text must match, so trailing garbage is a format error too.
 */
export function parseResponse(text: string, think: boolean): ParsedResponse {
  const match = (think ? WITH_THINK : ANSWER_ONLY).exec(text);
  if (!match) return { formatValid: false, think: null, answer: null, actions: [] };
  const answer = think ? match[2] : match[1];
  const actions = answer
    .split('||')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
  return { formatValid: actions.length > 0, think: think ? match[1].trim() : null, answer: answer.trim(), actions };
}

/** Renders a response in the same format (used for warm-up targets). */
export function formatResponse(thought: string, actions: readonly string[], think: boolean): string {
  const answer = `<answer> ${actions.join(' || ')} </answer>`;
  return think ? `<think> ${thought} </think> ${answer}` : answer;
}

/**
 * bench/lookup-qa-failures: where a lookup-qa policy fails. Plays a checkpoint `--samples` times
 * on each of the first `--episodes` held-out questions at the job's evaluation temperature (RAGEN's
 * protocol: 256 questions, T = 0.5), and breaks its success down by the question's hops. For each
 * failed episode it finds the first action that left the expert's path (search the chain's next
 * entity, then answer the last) and says what the policy named there: an entity of the search
 * result it had just been shown (a wrong fact picked), one the question names, or one it had not
 * been shown at all.
 *
 *   npm run train -- --spec job.json --checkpoint-out final.ckpt
 *   npm run bench:lookup-qa-failures -- --spec job.json --checkpoint final.ckpt [--samples 2] [--episodes 256]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { initBackend } from '../src/training/backend';
import { playCheckpoint } from '../src/training/checkpoint-evaluation';
import { LookupQaConfig, LookupQaEnv, parseToolCall } from '../src/training/envs/lookup-qa';
import { getEnvDefinition } from '../src/training/envs/registry';
import type { Trajectory } from '../src/training/rollout/engine';
import { evaluationSeed } from '../src/training/seeds';
import { parseJobSpec } from '../src/training/spec/validate';

/** The expert's k-th action on a question whose chain is `chain` (hops = chain.length − 1). */
function expertAction(chain: readonly string[], k: number): { tool: 'search' | 'answer'; argument: string } {
  return k < chain.length - 1 ? { tool: 'search', argument: chain[k] } : { tool: 'answer', argument: chain[chain.length - 1] };
}

/** Where an unsuccessful episode first left the expert's path, or null if it never did. */
function deviation(t: Trajectory, chain: readonly string[]): string | null {
  const played = t.turns.flatMap((turn) => turn.executed.map((action) => ({ action, observation: turn.observation })));
  for (let k = 0; k < chain.length; k++) {
    const want = expertAction(chain, k);
    if (k >= played.length) return `step ${k + 1}: no ${want.tool} (episode ended)`;
    const call = parseToolCall(played[k].action);
    if (call?.tool === want.tool && call.argument?.toLowerCase() === want.argument.toLowerCase()) continue;
    const [question, result = ''] = played[k].observation.split('\n');
    const named = call?.argument ?? '';
    const where = !call || !named ? 'not a well-formed call' : result.split(/\s+/).includes(named) ? 'an entity of the result just shown' : question.split(/\s+/).includes(named) ? 'the question\'s entity' : 'an entity not shown';
    return `step ${k + 1} (${want.tool} wanted): ${call?.tool ?? 'no tool'}, ${where}`;
  }
  return null;
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({ options: { spec: { type: 'string' }, checkpoint: { type: 'string' }, samples: { type: 'string', default: '2' }, episodes: { type: 'string', default: '256' } } });
  if (!args.spec || !args.checkpoint) throw new Error('usage: npm run bench:lookup-qa-failures -- --spec <job.json> --checkpoint <file> [--samples 2] [--episodes 256]');
  const spec = parseJobSpec(JSON.parse(readFileSync(args.spec, 'utf8')));
  if (spec.environment.id !== 'lookup-qa') throw new Error(`environment.id: this bench reads lookup-qa questions, not ${spec.environment.id}`);
  await initBackend('auto');
  const samples = Number(args.samples);
  const episodes = Number(args.episodes);
  const definition = getEnvDefinition('lookup-qa');
  const config = { ...definition.defaults, ...spec.environment.config } as LookupQaConfig;
  const request = { environment: { id: 'lookup-qa', config }, episodes, k: samples, temperature: spec.training.evalTemperature, seed: spec.training.seed };
  const { trajectories } = await playCheckpoint(new Uint8Array(readFileSync(args.checkpoint)), spec.rollout, request, definition);

  const byHops = new Map<number, { solved: number; played: number }>();
  const deviations = new Map<string, number>();
  trajectories.forEach((t, i) => {
    const env = new LookupQaEnv(config);
    env.reset(evaluationSeed(Math.floor(i / samples)));
    const { chain } = env.state.graph.question;
    const hops = chain.length - 1;
    const cell = byHops.get(hops) ?? { solved: 0, played: 0 };
    byHops.set(hops, { solved: cell.solved + (t.success ? 1 : 0), played: cell.played + 1 });
    const where = t.success ? null : deviation(t, chain);
    if (where) deviations.set(`${hops}-hop, ${where}`, (deviations.get(`${hops}-hop, ${where}`) ?? 0) + 1);
  });
  const solved = trajectories.filter((t) => t.success).length;
  console.log(`${args.checkpoint}: success ${((100 * solved) / trajectories.length).toFixed(1)}% over ${episodes} questions × ${samples} samples at T = ${request.temperature}`);
  console.log('\n| question | episodes | success |\n|---|---|---|');
  for (const [hops, { solved: s, played }] of [...byHops].sort(([a], [b]) => a - b)) console.log(`| ${hops}-hop | ${played} | ${((100 * s) / played).toFixed(1)}% |`);
  console.log('\n| first step off the expert\'s path | failed episodes |\n|---|---|');
  for (const [where, n] of [...deviations].sort(([, a], [, b]) => b - a)) console.log(`| ${where} | ${n} |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * bench/lookup-qa: what a lookup-qa success rate means. On the evaluation seeds (256 by default)
 * at a config (the default one unless given), under the job's default rollout budget (5 turns, one
 * call a turn), the success of
 *   * the random agent (bench/baselines: well-formed calls, uniform over search/answer × the
 *     entities its current observation shows), averaged over several passes;
 *   * the expert (the shortest chain of searches, then the answer), played through the same budget;
 * with the question mix by hop count and the mean tool calls per episode.
 *
 *   npm run bench:lookup-qa -- [--seeds 256] [--config '{"maxHops":2}']
 */
import { parseArgs } from 'node:util';
import { lookupQaExpert } from '../src/training/envs/experts';
import type { LookupQaEnv } from '../src/training/envs/lookup-qa';
import { getEnvDefinition } from '../src/training/envs/registry';
import { evaluationSeed } from '../src/training/seeds';
import { parseJobSpec } from '../src/training/spec/validate';
import { baselines } from '../src/training/experiment/baselines';

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '256' }, config: { type: 'string', default: '{}' } } });
const seeds = Number(values.seeds);
const spec = parseJobSpec({ environment: { id: 'lookup-qa', config: JSON.parse(values.config!) }, algorithm: { id: 'starpo-s' }, training: { evalEpisodes: seeds } });
const definition = getEnvDefinition('lookup-qa');
const { maxTurns, maxActionsPerEpisode } = spec.rollout;

let expertSolved = 0;
let expertCalls = 0;
const hops = new Map<number, number>();
for (let i = 0; i < seeds; i++) {
  const env = definition.create(spec.environment.config) as LookupQaEnv;
  env.reset(evaluationSeed(i));
  const h = env.state.graph.question.relations.length;
  hops.set(h, (hops.get(h) ?? 0) + 1);
  let success = false;
  // One call per turn, as the rollout engine plays it; the expert re-plans every turn.
  for (let turn = 0, actions = 0; turn < maxTurns && actions < maxActionsPerEpisode && !env.done; turn++, actions++) {
    success = env.step(lookupQaExpert(env)[0]).info.success || success;
  }
  if (success) expertSolved++;
  expertCalls += env.state.calls;
}

const mix = [...hops.entries()].sort(([a], [b]) => a - b).map(([h, n]) => `${h}-hop ${n}`).join(', ');
void baselines(spec).then(({ random }) => {
  console.log(`lookup-qa ${JSON.stringify(spec.environment.config)}, ${seeds} evaluation seeds (${mix}), budget ${maxTurns} turns × 1 call`);
  console.log(`random agent success ${random.toFixed(3)}`);
  console.log(`expert success ${(expertSolved / seeds).toFixed(3)}, ${(expertCalls / seeds).toFixed(2)} searches per episode`);
});

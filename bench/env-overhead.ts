/**
 * bench/env-overhead: the rollout time of the default FrozenLake job (8 groups × 16 episodes, up to
 * 5 turns) on the built-in FrozenLake against the same game served over the StarLab protocol by a
 * local server process (test/support/protocol-server.ts), in one run: the same policy, seeds and
 * vocabulary, alternating the two, median over the rounds. Goal: ≤ 1.10×.
 *
 * The model has a short format warm-up first, so its answers are actions and the episodes step.
 *
 *   npm run bench:env-overhead -- [--rounds 9] [--warmup 40] [--backend wasm]
 */
import { parseArgs } from 'node:util';
import { connectServedEnvironment } from '../src/repositories/env-servers';
import { BackendChoice, initBackend } from '../src/training/backend';
import { getEnvDefinition } from '../src/training/envs/registry';
import type { EnvDefinition } from '../src/training/envs/types';
import { contextsFor, tokenizerFor } from '../src/training/episode-io';
import { gridLayoutFor } from '../src/training/policy/grid-positions';
import { TransformerPolicy } from '../src/training/policy/policy';
import { Adam } from '../src/training/policy/adam';
import { TransformerLM } from '../src/training/policy/transformer';
import { scriptedExamples, supervisedStep } from '../src/training/warmup';
import { Rng } from '../src/training/random';
import { rollout } from '../src/training/rollout/engine';
import { trainingSeed } from '../src/training/seeds';
import { parseJobSpec } from '../src/training/spec/validate';
import { startProtocolServer } from '../test/support/protocol-server';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' }, backend: { type: 'string', default: 'wasm' }, warmup: { type: 'string', default: '40' } } });
  const rounds = Number(values.rounds);
  const backend = await initBackend(values.backend as BackendChoice);
  const server = await startProtocolServer();
  const served = await connectServedEnvironment('frozenlake', { url: server.url, protocol: 'starlab' });
  try {
    // The built-in under the served vocabulary, so both sides run the very same model.
    const builtIn: EnvDefinition = { ...getEnvDefinition('frozenlake'), served: served.definition.served };
    const spec = parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' } }, served.definition);
    const tokenizer = tokenizerFor(served.definition, spec);
    const contexts = contextsFor(tokenizer, spec);
    const config = { vocabSize: tokenizer.size, ...spec.model.config };
    const model = new TransformerLM(config, 1, tokenizer.forbiddenIds, gridLayoutFor(config, tokenizer.tokens));
    // A short format warm-up, so the policy answers with actions and the episodes step as a job's do.
    const optimizer = new Adam(model.namedVariables(), 0.003);
    const rng = new Rng(3);
    let episode = 0;
    for (let i = 0; i < Number(values.warmup); i++) {
      const rows = await scriptedExamples('format', builtIn, {}, spec.rollout, tokenizer, contexts, rng, () => episode++, 32);
      supervisedStep(model, optimizer, rows, 1);
    }
    optimizer.dispose();
    const { groups, groupSize } = spec.rollout;
    const times: Record<'builtIn' | 'served', number[]> = { builtIn: [], served: [] };
    let actions = 0;
    for (let round = 0; round <= rounds; round++) {
      const requests = Array.from({ length: groups * groupSize }, (_, i) => ({ seed: trainingSeed(round, Math.floor(i / groupSize)), group: Math.floor(i / groupSize), sample: i % groupSize }));
      for (const [side, definition] of [['builtIn', builtIn], ['served', served.definition]] as const) {
        const policy = new TransformerPolicy(model, tokenizer, new Rng(round), true);
        const started = performance.now();
        const trajectories = await rollout(policy, () => definition.create({}), requests, tokenizer, contexts, spec.rollout);
        // Round 0 warms the kernels and the connections up.
        if (round > 0) times[side].push(performance.now() - started);
        if (side === 'served' && round > 0) actions += trajectories.reduce((n, t) => n + t.turns.reduce((m, turn) => m + turn.executed.length + turn.invalidActions, 0), 0);
      }
    }
    const [builtInMs, servedMs] = [median(times.builtIn), median(times.served)];
    console.log(`default FrozenLake job's rollout (${groups}×${groupSize} episodes, ${spec.rollout.maxTurns} turns), backend ${backend}, ${rounds} rounds, median:`);
    console.log(`  built-in              ${builtInMs.toFixed(0)} ms  (${times.builtIn.map((t) => t.toFixed(0)).join(', ')})`);
    console.log(`  over the protocol     ${servedMs.toFixed(0)} ms  (${times.served.map((t) => t.toFixed(0)).join(', ')}), ${(actions / rounds).toFixed(0)} steps per rollout`);
    // The two sides of a round play the very same episodes, so a round's ratio is like for like;
    // its median is less shaken by a noisy machine than the ratio of the medians.
    const ratios = times.served.map((t, i) => t / times.builtIn[i]);
    console.log(`  ratio of the medians  ${(servedMs / builtInMs).toFixed(3)}×  (goal ≤ 1.10×)`);
    console.log(`  median round's ratio  ${median(ratios).toFixed(3)}×  (${ratios.map((r) => r.toFixed(2)).join(', ')})`);
    model.dispose();
  } finally {
    served.dispose();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

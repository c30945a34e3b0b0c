/**
 * bench/lake-failures: where a FrozenLake policy fails. Plays a checkpoint `--samples` times on
 * each of the first `--episodes` held-out evaluation maps at the job's evaluation temperature
 * (RAGEN's protocol: 256 maps, T = 0.5), and breaks its success down by the map's shortest path
 * (its length, and which directions it needs) and its failures by how they ended: in a hole, or
 * out of actions or turns. The job spec gives the lake's config and the rollout's settings.
 *
 *   npm run train -- --spec job.json --checkpoint-out final.ckpt
 *   npm run bench:lake-failures -- --spec job.json --checkpoint final.ckpt [--samples 4] [--episodes 256]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { mean } from '../src/training/algorithms/stats';
import { initBackend } from '../src/training/backend';
import { FrozenLakeConfig, FrozenLakeEnv, shortestFrozenPath } from '../src/training/envs/frozenlake';
import { getEnvDefinition } from '../src/training/envs/registry';
import { playCheckpoint } from '../src/training/checkpoint-evaluation';
import type { Trajectory } from '../src/training/rollout/engine';
import { evaluationSeed } from '../src/training/seeds';
import { parseJobSpec } from '../src/training/spec/validate';

function ending(t: Trajectory, maxActions: number): string {
  if (t.success) return 'goal';
  if (t.terminated) return 'hole';
  return t.actionCount >= maxActions ? 'out of actions' : 'out of turns';
}

function table(title: string, groups: Map<string, number[]>): void {
  console.log(`\n| ${title} | maps | success |\n|---|---|---|`);
  for (const [key, rates] of [...groups].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))) console.log(`| ${key} | ${rates.length} | ${(100 * mean(rates)).toFixed(1)}% |`);
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({ options: { spec: { type: 'string' }, checkpoint: { type: 'string' }, samples: { type: 'string', default: '4' }, episodes: { type: 'string', default: '256' } } });
  if (!args.spec || !args.checkpoint) throw new Error('usage: npm run bench:lake-failures -- --spec <job.json> --checkpoint <file> [--samples 4] [--episodes 256]');
  const spec = parseJobSpec(JSON.parse(readFileSync(args.spec, 'utf8')));
  if (spec.environment.id !== 'frozenlake') throw new Error(`environment.id: this bench reads FrozenLake maps, not ${spec.environment.id}`);
  await initBackend('auto');
  const samples = Number(args.samples);
  const episodes = Number(args.episodes);
  const definition = getEnvDefinition('frozenlake');
  const config = { ...definition.defaults, ...spec.environment.config } as FrozenLakeConfig;
  const settings = spec.rollout;
  const request = { environment: { id: 'frozenlake', config }, episodes, k: samples, temperature: spec.training.evalTemperature, seed: spec.training.seed };
  const { trajectories } = await playCheckpoint(new Uint8Array(readFileSync(args.checkpoint)), settings, request, definition);

  const byLength = new Map<string, number[]>();
  const byDirections = new Map<string, number[]>();
  const endings = new Map<string, number>();
  const rates: number[] = [];
  for (let map = 0; map < episodes; map++) {
    const lake = new FrozenLakeEnv(config);
    lake.reset(evaluationSeed(map));
    const path = shortestFrozenPath(lake.state)!;
    const played = trajectories.slice(map * samples, (map + 1) * samples);
    const rate = mean(played.map((t) => (t.success ? 1 : 0)));
    rates.push(rate);
    const add = (groups: Map<string, number[]>, key: string) => groups.set(key, [...(groups.get(key) ?? []), rate]);
    add(byLength, String(path.length));
    add(byDirections, [...new Set(path)].sort().join(' + '));
    for (const how of played.map((t) => ending(t, settings.maxActionsPerEpisode))) endings.set(how, (endings.get(how) ?? 0) + 1);
  }
  console.log(`${args.checkpoint}: success ${(100 * mean(rates)).toFixed(1)}% over ${episodes} maps × ${samples} samples at T = ${request.temperature}`);
  console.log(`maps never solved: ${rates.filter((r) => r === 0).length}; always solved: ${rates.filter((r) => r === 1).length}`);
  console.log(`episodes ending ${[...endings].map(([how, n]) => `${how}: ${n}`).join(', ')}`);
  table('shortest path (actions)', byLength);
  table('directions the shortest path needs', byDirections);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * bench/learning: eval success after the warm-up and after RL, per preset, warm-up kind and
 * environment, next to a format-valid random agent, the optimal policy (FrozenLake, exact DP)
 * and RAGEN's published StarPO-S figures for Qwen2.5-0.5B. Each run is a separate process;
 * `--parallel` runs that many at once. Results are appended to --out as JSON lines, so a long
 * bench can be resumed (finished runs are skipped).
 *
 *   npm run bench:learning -- [--steps 200] [--parallel 2] [--envs frozenlake,sokoban]
 *                             [--presets starpo-ppo,starpo-grpo,starpo-s] [--warmups demonstrations,format]
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '../src/training/backend';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';
import { baselines } from './baselines';

/** RAGEN (Wang et al. 2025), StarPO-S with Qwen2.5-0.5B-Instruct, success rates. */
const RAGEN = { sokoban: 0.203, frozenlake: 0.218 } as Record<string, number>;

interface Run {
  env: string;
  slippery?: boolean;
  preset: string;
  warmup: 'demonstrations' | 'format';
  steps: number;
  seed?: number;
}

interface Result extends Run {
  key: string;
  afterWarmup: number;
  afterRl: number;
  best: number;
  random: number;
  optimal: number | null;
  seconds: number;
}

/** The common setup of every run, stated once. */
function specFor(run: Run) {
  const grid = run.env === 'sokoban' ? 6 * 7 : 4 * 5;
  return parseJobSpec({
    name: `bench-${run.env}-${run.preset}-${run.warmup}`,
    environment: { id: run.env, config: run.env === 'frozenlake' ? { slippery: run.slippery ?? true } : {} },
    algorithm: { id: run.preset, config: { miniBatches: 4, entropyCoef: 0.003 } },
    model: { config: { layers: 2, dModel: 32, heads: 2, contextLength: grid + 8 + 24 } },
    rollout: { groups: 16, groupSize: 8, historyTurns: 0, maxTokensPerTurn: 24, think: false },
    training: { steps: run.steps, seed: run.seed ?? 1, lrSchedule: 'cosine', evalEvery: 25, evalEpisodes: 128, evalTemperature: 1, warmup: { kind: run.warmup, steps: 150 } },
  });
}

const keyOf = (run: Run) => `${run.env}${run.env === 'frozenlake' ? (run.slippery === false ? '-still' : '-slippery') : ''}/${run.preset}/${run.warmup}/${run.steps}`;

async function runOne(run: Run): Promise<Result> {
  await initBackend('wasm');
  const spec = specFor(run);
  const started = Date.now();
  const trainer = await Trainer.create(spec);
  const evals: number[] = [];
  await trainer.run({
    onStep: (_step, metrics) => {
      if (metrics['eval/success'] !== undefined) evals.push(metrics['eval/success']);
    },
  });
  trainer.dispose();
  const base = baselines(spec);
  return { ...run, key: keyOf(run), afterWarmup: evals[0], afterRl: evals[evals.length - 1], best: Math.max(...evals.slice(1)), ...base, seconds: (Date.now() - started) / 1000 };
}

function spawnRun(run: Run): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', __filename, '--run', JSON.stringify(run)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`run ${keyOf(run)} exited ${code}`))));
  });
}

function printTable(results: Result[]): void {
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? '   –  ' : `${(100 * x).toFixed(1).padStart(5)}%`);
  console.log('\nenvironment          preset          warm-up          after warm-up  after RL   best    Δ RL    random  optimal  RAGEN   time');
  for (const r of results.sort((a, b) => a.key.localeCompare(b.key))) {
    const env = r.key.split('/')[0];
    console.log(
      `${env.padEnd(20)} ${r.preset.padEnd(15)} ${r.warmup.padEnd(15)}  ${pct(r.afterWarmup)}        ${pct(r.afterRl)}   ${pct(r.best)}  ${(r.afterRl - r.afterWarmup >= 0 ? '+' : '') + (100 * (r.afterRl - r.afterWarmup)).toFixed(1)}   ${pct(r.random)}  ${pct(r.optimal)}   ${pct(RAGEN[r.env])}  ${Math.round(r.seconds)}s`,
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      run: { type: 'string' },
      steps: { type: 'string', default: '200' },
      parallel: { type: 'string', default: '2' },
      envs: { type: 'string', default: 'frozenlake,frozenlake-still,sokoban' },
      presets: { type: 'string', default: 'starpo-ppo,starpo-grpo,starpo-s' },
      warmups: { type: 'string', default: 'demonstrations,format' },
      out: { type: 'string', default: 'bench/results/learning.jsonl' },
    },
  });
  if (values.run) {
    console.log(JSON.stringify(await runOne(JSON.parse(values.run))));
    return;
  }
  const runs: Run[] = [];
  for (const envName of values.envs!.split(',')) {
    for (const warmup of values.warmups!.split(',') as Run['warmup'][]) {
      for (const preset of values.presets!.split(',')) {
        const env = envName.replace('-still', '');
        runs.push({ env, slippery: env === 'frozenlake' ? !envName.endsWith('-still') : undefined, preset, warmup, steps: Number(values.steps) });
      }
    }
  }
  mkdirSync(dirname(values.out!), { recursive: true });
  const done = existsSync(values.out!) ? readFileSync(values.out!, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Result) : [];
  const pending = runs.filter((run) => !done.some((d) => d.key === keyOf(run)));
  console.log(`${runs.length} runs (${done.length} already in ${values.out}), ${values.parallel} at a time, ${values.steps} RL steps each`);
  const queue = [...pending];
  await Promise.all(
    Array.from({ length: Number(values.parallel) }, async () => {
      for (let run = queue.shift(); run; run = queue.shift()) {
        const result = await spawnRun(run);
        appendFileSync(values.out!, `${JSON.stringify(result)}\n`);
        console.log(`${result.key}: warm-up ${result.afterWarmup.toFixed(3)} → RL ${result.afterRl.toFixed(3)} (random ${result.random.toFixed(3)}) in ${Math.round(result.seconds)} s`);
        done.push(result);
      }
    }),
  );
  printTable(done.filter((d) => runs.some((run) => keyOf(run) === d.key)));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

/**
 * Command-line runner: trains one job spec in this process, without the service.
 *
 *   npm run train -- --spec job.json [--algorithm <preset>] [--metrics-out metrics.jsonl]
 *                    [--checkpoint-out final.ckpt] [--backend auto|tfjs-node-gpu|tfjs-node|wasm|cpu]
 *
 * `--algorithm` replaces the spec's `algorithm.id` (its `algorithm.config` overrides still apply),
 * so one spec file can be trained under every preset. An environment served by another process is
 * `{"id": "http", "config": {"url": "http://…"}}` (the StarLab protocol) or `{"id": "openenv",
 * "config": {"url", "observationField", "actionField", "actions"}}` (docs/environments.md).
 * Writes one JSON line per step, {"step": n, "metrics": {canonical name: value}}, and one per step
 * with collapse warnings, {"step": n, "warnings": [...]}, shown on the terminal as they fire.
 * Exits 2 for an invalid spec or arguments (naming the field), 1 if training fails.
 */
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ALGORITHM_IDS } from '../training/algorithms/presets';
import { BACKEND_PREFERENCE, BackendChoice } from '../training/backend';
import { SpecValidationError } from '../training/spec/errors';
import { evalSuccessOf } from '../training/signals/step-metrics';
import { JobSpec, parseJobSpec } from '../training/spec/validate';
import { EnvServerError } from '../training/envs/remote/protocol';
import type { EnvDefinition } from '../training/envs/types';
import { servedEnvironmentOf } from './served-environment';
import { Trainer } from '../training/trainer';
import { ProgressBar } from './progress';

const USAGE =
  'usage: npm run train -- --spec <job.json> [--algorithm <preset>] [--metrics-out <file.jsonl>] [--checkpoint-out <file>] [--backend <name>]\n' +
  `  presets: ${ALGORITHM_IDS.join(', ')} (GET /v1/algorithms describes each)`;

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function readSpec(path: string, algorithmId: string | undefined): Promise<{ spec: JobSpec; environment?: EnvDefinition; dispose: () => void }> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(`cannot read job spec ${path}: ${(error as Error).message}`);
  }
  if (algorithmId !== undefined && typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const spec = raw as { algorithm?: unknown };
    const algorithm = typeof spec.algorithm === 'object' && spec.algorithm !== null ? spec.algorithm : {};
    spec.algorithm = { ...algorithm, id: algorithmId };
  }
  try {
    const served = await servedEnvironmentOf(raw);
    if (!served) return { spec: parseJobSpec(raw), dispose: () => undefined };
    try {
      return { spec: parseJobSpec(served.spec, served.definition), environment: served.definition, dispose: served.dispose };
    } catch (error) {
      served.dispose();
      throw error;
    }
  } catch (error) {
    if (error instanceof EnvServerError) fail(`cannot train on the environment server: ${error.message}`);
    if (error instanceof SpecValidationError) {
      fail(`invalid job spec ${path}:\n${error.errors.map((e) => `  ${e.field}: ${e.message}`).join('\n')}`);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs({
      options: {
        spec: { type: 'string' },
        algorithm: { type: 'string' },
        'metrics-out': { type: 'string' },
        'checkpoint-out': { type: 'string' },
        backend: { type: 'string', default: 'auto' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  if (args.help) fail(USAGE, 0);
  if (!args.spec) fail(`--spec is required\n${USAGE}`);
  const backend = args.backend as BackendChoice;
  if (backend !== 'auto' && !(BACKEND_PREFERENCE as readonly string[]).includes(backend)) {
    fail(`--backend must be one of auto, ${BACKEND_PREFERENCE.join(', ')}`);
  }
  const { spec, environment, dispose } = await readSpec(args.spec, args.algorithm);
  const progress = new ProgressBar(spec.training.steps);
  const trainer = await Trainer.create(spec, { backend, environment }, (m) => progress.message(m));
  progress.message(
    `${spec.name}: ${spec.environment.id} / ${spec.algorithm.id}, ${trainer.parameterCount} parameters, ` +
      `${spec.rollout.groups}×${spec.rollout.groupSize} rollouts × ${spec.training.steps} steps, warm-up ${spec.training.warmup.kind} ` +
      `${spec.training.warmup.steps} steps, backend ${trainer.backend}`,
  );
  const out = args['metrics-out'] ? createWriteStream(args['metrics-out']) : null;
  let firstEval: number | undefined;
  let lastEval: number | undefined;
  const result = await trainer.run({
    onLog: (m) => progress.message(m),
    onStep: (step, metrics) => {
      out?.write(`${JSON.stringify({ step, metrics })}\n`);
      const evalSuccess = evalSuccessOf(metrics);
      if (evalSuccess !== undefined) {
        firstEval ??= evalSuccess;
        lastEval = evalSuccess;
      }
      progress.update(step, metrics);
    },
    onWarnings: (step, warnings) => {
      out?.write(`${JSON.stringify({ step, warnings })}\n`);
      for (const w of warnings) progress.message(`⚠ step ${step} ${w.severity} ${w.detector}: ${w.message}`);
    },
    onCheckpoint: args['checkpoint-out'] ? (_step, bytes) => writeFileSync(args['checkpoint-out']!, bytes) : undefined,
  });
  progress.finish();
  await new Promise<void>((resolve) => (out ? out.end(resolve) : resolve()));
  progress.message(`done: ${result.step} steps; eval success after warm-up ${firstEval?.toFixed(3)}, at the end ${lastEval?.toFixed(3)}`);
  trainer.dispose();
  dispose();
}

// A server that failed is a reason for the user (which environment, which request), not a stack trace.
main().catch((error) => fail(`training failed: ${error instanceof EnvServerError ? error.message : ((error as Error).stack ?? error)}`, 1));

/**
 * Command-line runner: trains one job spec in this process, without the service.
 *
 *   npm run train -- --spec job.json [--metrics-out metrics.jsonl] [--checkpoint-out final.ckpt]
 *                    [--backend auto|tfjs-node-gpu|tfjs-node|wasm|cpu] [--algorithm <preset id>]
 *
 * `--algorithm` replaces the spec's `algorithm.id` (its `algorithm.config` overrides still apply).
 *
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
import { parseJobSpec } from '../training/spec/validate';
import { Trainer } from '../training/trainer';
import { ProgressBar } from './progress';

const USAGE =
  'usage: npm run train -- --spec <job.json> [--metrics-out <file.jsonl>] [--checkpoint-out <file>] [--backend <name>] [--algorithm <id>]\n' +
  `  --algorithm replaces the spec's algorithm.id: ${ALGORITHM_IDS.join(', ')}`;

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function readSpec(path: string, algorithm?: string) {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(`cannot read job spec ${path}: ${(error as Error).message}`);
  }
  if (algorithm !== undefined && raw !== null && typeof raw === 'object') {
    const spec = raw as { algorithm?: { id?: string } };
    raw = { ...spec, algorithm: { ...spec.algorithm, id: algorithm } };
  }
  try {
    return parseJobSpec(raw);
  } catch (error) {
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
        'metrics-out': { type: 'string' },
        'checkpoint-out': { type: 'string' },
        backend: { type: 'string', default: 'auto' },
        algorithm: { type: 'string' },
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
  const spec = readSpec(args.spec, args.algorithm);
  const progress = new ProgressBar(spec.training.steps);
  const trainer = await Trainer.create(spec, { backend }, (m) => progress.message(m));
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
}

main().catch((error) => fail(`training failed: ${(error as Error).stack ?? error}`, 1));

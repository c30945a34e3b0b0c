/**
 * Where a default step's time goes: the default FrozenLake job from demonstrations (warm-up
 * shortened) with its phases timed by wrapping the methods that do them. Each wrapper counts its
 * own time only (a forward pass inside a gradient is forward, the rest of the gradient backward),
 * and anything run inside evaluation counts as evaluation. Evaluation and persistence are
 * amortised over their schedule (every `evalEvery` and `checkpointEvery` steps of the job).
 */
import * as tf from '@tensorflow/tfjs';
import { Adam } from '../src/training/policy/adam';
import { PackedBatch } from '../src/training/policy/batch';
import { TransformerPolicy } from '../src/training/policy/policy';
import { TransformerLM } from '../src/training/policy/transformer';
import { parseJobSpec } from '../src/training/spec/validate';
import { Trainer } from '../src/training/trainer';

type Totals = Map<string, { ms: number; calls: number }>;

const totals: Totals = new Map();
const stack: { phase: string; started: number; children: number }[] = [];
const now = () => performance.now();

/** Replaces obj[method] by a timed call counted under `phase`; returns the undo. */
function timePhase(obj: object, method: string, phase: string): () => void {
  const target = obj as Record<string, (...args: unknown[]) => unknown>;
  const original = target[method];
  target[method] = function timed(this: unknown, ...args: unknown[]) {
    const counted = phase !== 'evaluation' && stack.some((f) => f.phase === 'evaluation') ? 'evaluation' : phase;
    const frame = { phase: counted, started: now(), children: 0 };
    stack.push(frame);
    const close = () => {
      stack.splice(stack.lastIndexOf(frame), 1);
      const elapsed = now() - frame.started;
      const entry = totals.get(counted) ?? { ms: 0, calls: 0 };
      // Calls count the phase's own method only (not what evaluation calls), for the amortisation.
      totals.set(counted, { ms: entry.ms + elapsed - frame.children, calls: entry.calls + (counted === phase ? 1 : 0) });
      if (stack.length > 0) stack[stack.length - 1].children += elapsed;
    };
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (error) {
      close();
      throw error;
    }
    // An async method (evaluation) is timed until its promise settles, and what it calls meanwhile
    // counts under it: the trainer awaits it before anything else runs.
    if (result instanceof Promise) return result.finally(close);
    close();
    return result;
  };
  return () => (target[method] = original);
}

const snapshot = (): Totals => new Map([...totals].map(([k, v]) => [k, { ...v }]));
const since = (before: Totals, phase: string) => (totals.get(phase)?.ms ?? 0) - (before.get(phase)?.ms ?? 0);

export async function profileDefaultStep(warmupSteps = 10, steps = 2): Promise<string> {
  const spec = parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations', steps: warmupSteps }, steps, evalEvery: steps, checkpointEvery: steps } });
  const { evalEvery, checkpointEvery } = parseJobSpec({ environment: { id: 'frozenlake' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } }).training;
  const engine = tf.engine() as unknown as object;
  const undo = [
    timePhase(TransformerPolicy.prototype, 'respond', 'generation'),
    timePhase(TransformerLM.prototype, 'forward', 'forward'),
    timePhase(engine, 'gradients', 'backward'),
    timePhase(Adam.prototype, 'apply', 'optimiser'),
    ...['inputTensor', 'targetOneHot', 'atTokens', 'perToken', 'gatherResponse'].map((m) => timePhase(PackedBatch.prototype, m, 'packing')),
    timePhase(Trainer.prototype, 'evaluationMetrics', 'evaluation'),
    timePhase(Trainer.prototype, 'checkpointBytes', 'persistence'),
  ];
  totals.clear();
  const trainer = await Trainer.create(spec);
  let atStep0: Totals = new Map();
  let rolloutMs = 0;
  let stepMs = 0;
  let warmupMs = 0;
  const started = now();
  await trainer.run({
    onStep: (step, m) => {
      if (step === 0) {
        atStep0 = snapshot();
        warmupMs = now() - started - (atStep0.get('evaluation')?.ms ?? 0);
      } else stepMs += m['perf/step_ms'];
    },
    onRolloutEnd: (_step, _n, ms) => void (rolloutMs += ms),
    onCheckpoint: () => undefined,
  });
  trainer.dispose();
  undo.forEach((u) => u());
  const perStep = (phase: string) => since(atStep0, phase) / steps;
  const evaluationCalls = (totals.get('evaluation')?.calls ?? 0) - (atStep0.get('evaluation')?.calls ?? 0);
  const persistenceCalls = (totals.get('persistence')?.calls ?? 0) - (atStep0.get('persistence')?.calls ?? 0);
  const rows: [string, number][] = [
    ['generation', perStep('generation')],
    ['environment and tokenisation', rolloutMs / steps - perStep('generation')],
    ['packing', perStep('packing')],
    ['forward', perStep('forward')],
    ['backward (with the loss)', perStep('backward')],
    ['optimiser', perStep('optimiser')],
  ];
  const inStep = rows.reduce((a, [, ms]) => a + ms, 0);
  rows.push(['other (advantages, metrics, filtering)', stepMs / steps - inStep]);
  rows.push([`evaluation (${spec.training.evalEpisodes} episodes, every ${evalEvery} steps)`, since(atStep0, 'evaluation') / Math.max(1, evaluationCalls) / evalEvery]);
  rows.push([`persistence (checkpoint, every ${checkpointEvery} steps)`, since(atStep0, 'persistence') / Math.max(1, persistenceCalls) / checkpointEvery]);
  const total = rows.reduce((a, [, ms]) => a + ms, 0);
  const warmupPhases = ['forward', 'backward', 'optimiser', 'generation', 'packing'].map((p) => `${p} ${((atStep0.get(p)?.ms ?? 0) / warmupSteps).toFixed(0)}`).join(', ');
  return [
    `default FrozenLake step from demonstrations (mean of ${steps} steps; evaluation and persistence amortised): ${total.toFixed(0)} ms`,
    '| phase | ms per step | share |',
    '|---|---|---|',
    ...rows.map(([name, ms]) => `| ${name} | ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(0)}% |`),
    `warm-up: ${(warmupMs / warmupSteps).toFixed(0)} ms per imitation step (${warmupSteps} steps, demonstrations included); per step ms: ${warmupPhases}`,
  ].join('\n');
}

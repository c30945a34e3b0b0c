import * as tf from '@tensorflow/tfjs';
import { parseJobSpec } from '../../src/training/spec/validate';
import { Trainer } from '../../src/training/trainer';
import { useTestBackend } from '../support/tf';

/**
 * One step of the largest job the spec's bounds allow, on each environment: every bound of the
 * step's work at its maximum (256 episodes of 10 turns and 48-token answers with <think>, a
 * 4-layer d=128 model over 512 positions with a critic and a KL reference, all 256 trajectories
 * in one minibatch for 4 epochs, the world-model loss on). Before updates were chunked, a far
 * smaller vanilla job aborted the wasm backend at 4.3 GB. Evaluation is kept to one episode: it
 * is generation, which the rollout already exercises at its largest batch.
 *
 * Up to hours per environment on a 2-core CPU worker (Bandit's step took 34 minutes), so it is not
 * part of `npm test`: `npm run test:capacity`, or one environment with `-- -t sokoban`.
 */
const WASM_HEAP_LIMIT_MB = 4096;

const largest = (envId: string) =>
  parseJobSpec({
    environment: { id: envId },
    algorithm: { id: 'starpo-ppo', config: { klCoef: 0.001, epochs: 4, miniBatchSize: 256, worldModelCoef: 1 } },
    model: { config: { layers: 4, dModel: 128, heads: 8, ffnMultiplier: 4, contextLength: 512 } },
    rollout: { groups: 8, groupSize: 32, maxTurns: 10, maxActionsPerTurn: 10, maxActionsPerEpisode: 50, maxTokensPerTurn: 48, think: true },
    training: { steps: 1, evalEvery: 0, evalEpisodes: 1, checkpointEvery: 0, warmup: { kind: 'format', steps: 1, batchSize: 512 } },
  });

describe('capacity: one step of the largest job', () => {
  beforeAll(useTestBackend);

  it.each(['bandit', 'sokoban', 'frozenlake', 'lookup-qa'])('%s trains one step within the memory limit', async (envId) => {
    const spec = largest(envId);
    const started = Date.now();
    const trainer = await Trainer.create(spec);
    const steps: Record<string, number>[] = [];
    await trainer.run({
      onStep: (step, metrics) => void (step === 1 && steps.push(metrics)),
      onRolloutEnd: (_step, n, ms) => console.log(`${envId}: rolled out ${n} trajectories in ${(ms / 1000).toFixed(0)} s; updating`),
    });
    trainer.dispose();
    const heapMb = ((tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length) / 2 ** 20;
    const rssMb = process.resourceUsage().maxRSS / 1024;
    console.log(`${envId}: one step of the largest job in ${((Date.now() - started) / 1000).toFixed(0)} s (rollout ${steps[0]['perf/rollout_ms']} ms, update ${steps[0]['perf/update_ms']} ms), wasm heap ${heapMb.toFixed(0)} MB, peak RSS ${rssMb.toFixed(0)} MB`);
    expect(steps).toHaveLength(1);
    expect(steps[0]['update/optimiser_steps']).toBe(4);
    expect(Number.isFinite(steps[0]['grad_norm/actor'])).toBe(true);
    expect(heapMb).toBeLessThan(WASM_HEAP_LIMIT_MB * 0.75);
  }, 4 * 3_600_000);
});

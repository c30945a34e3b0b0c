import { parseJobSpec } from '../training/spec/validate';
import { TrainingProcess, TrainingSink } from './training-runner';

const spec = parseJobSpec({
  environment: { id: 'bandit' },
  algorithm: { id: 'starpo-s-grpo' },
  model: { config: { layers: 1, dModel: 16, contextLength: 40 } },
  rollout: { groups: 2, groupSize: 4, maxTokensPerTurn: 12 },
  training: { steps: 4, evalEvery: 0, evalEpisodes: 4, checkpointEvery: 2, warmup: { steps: 2, batchSize: 8 } },
});

/** Records what the child reported; `onStep` can act on the process mid-run. */
class RecordingSink implements TrainingSink {
  startedInfo: { backend: string; fromStep: number } | null = null;
  steps: number[] = [];
  checkpoints: number[] = [];
  trajectoriesPerStep: number[] = [];
  onStep: (step: number) => void = () => undefined;
  async started(info: { backend: string; fromStep: number }) {
    this.startedInfo = info;
  }
  async step(step: number, _metrics: unknown, trajectories: unknown[]) {
    // Slow persistence: the child must wait for the ack rather than run ahead.
    await new Promise((r) => setTimeout(r, 20));
    this.steps.push(step);
    this.trajectoriesPerStep.push(trajectories.length);
    this.onStep(step);
  }
  async checkpoint(step: number, _bytes: Uint8Array, health: string) {
    expect(['healthy', 'suspect', 'unhealthy']).toContain(health);
    this.checkpoints.push(step);
  }
  async warnings() {}
  async log() {}
}

const sink = () => new RecordingSink();

describe('TrainingProcess', () => {
  it('trains in a child process and reports every step, trajectories and checkpoints in order', async () => {
    const recorder = sink();
    const outcome = await new TrainingProcess(spec, 'wasm', null, recorder).outcome;
    expect(outcome).toEqual({ status: 'completed', step: 4 });
    expect(recorder.startedInfo).toMatchObject({ backend: 'wasm', fromStep: 0 });
    expect(recorder.steps).toEqual([0, 1, 2, 3, 4]);
    expect(recorder.trajectoriesPerStep).toEqual([0, 8, 8, 8, 8]);
    expect(recorder.checkpoints).toEqual([0, 2, 4]);
  }, 60_000);

  it('stops gracefully after the current step with a checkpoint', async () => {
    const recorder = sink();
    const process = new TrainingProcess(spec, 'wasm', null, recorder);
    recorder.onStep = (step) => step === 1 && process.stop();
    expect(await process.outcome).toEqual({ status: 'stopped', step: 1 });
    expect(recorder.checkpoints).toEqual([0, 1]);
  }, 60_000);

  it('can be killed at once', async () => {
    const recorder = sink();
    const process = new TrainingProcess(spec, 'wasm', null, recorder);
    recorder.onStep = (step) => step === 0 && process.kill();
    expect(await process.outcome).toEqual({ status: 'killed' });
    expect(recorder.steps).toEqual([0]);
  }, 60_000);
});

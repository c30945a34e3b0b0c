import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseJobSpec } from '../training/spec/validate';
import { ProcessRepository } from '../repositories/process.repository';
import { TrainingProcess, TrainingSink } from './training-runner';

const processes = new ProcessRepository();

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
  metrics = new Map<number, Record<string, number>>();
  onStep: (step: number) => void = () => undefined;
  /** A step whose write fails for good (the database gave up). */
  failStep: number | null = null;
  async started(info: { backend: string; fromStep: number }) {
    this.startedInfo = info;
  }
  async step(step: number, metrics: Record<string, number>, trajectories: unknown[]) {
    this.metrics.set(step, metrics);
    // Slow persistence: the child must wait for the ack rather than run ahead.
    await new Promise((r) => setTimeout(r, 20));
    if (step === this.failStep) throw new Error('disk on fire');
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
    const outcome = await new TrainingProcess(processes, spec, 'wasm', null, recorder).outcome;
    expect(outcome).toEqual({ status: 'completed', step: 4 });
    expect(recorder.startedInfo).toMatchObject({ backend: 'wasm', fromStep: 0 });
    expect(recorder.steps).toEqual([0, 1, 2, 3, 4]);
    expect(recorder.trajectoriesPerStep).toEqual([0, 8, 8, 8, 8]);
    expect(recorder.checkpoints).toEqual([0, 2, 4]);
  }, 60_000);

  it("shares a warm-up through the worker's cache folder with a job that differs only in its RL settings", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warmups-'));
    try {
      const first = sink();
      expect(await new TrainingProcess(processes, spec, 'wasm', null, first, { warmupCache: { dir, entries: 4 } }).outcome).toEqual({ status: 'completed', step: 4 });
      const sweep = parseJobSpec({ ...spec, name: 'lr sweep', training: { ...spec.training, learningRate: 0.003 } });
      const second = sink();
      expect(await new TrainingProcess(processes, sweep, 'wasm', null, second, { warmupCache: { dir, entries: 4 } }).outcome).toEqual({ status: 'completed', step: 4 });
      expect(first.metrics.get(0)!['warmup/reused']).toBe(0);
      expect(second.metrics.get(0)!['warmup/reused']).toBe(1);
      expect(second.metrics.get(0)!['warmup/loss']).toBe(first.metrics.get(0)!['warmup/loss']);
      expect(readdirSync(dir)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('stops gracefully after the current step with a checkpoint', async () => {
    const recorder = sink();
    const process = new TrainingProcess(processes, spec, 'wasm', null, recorder);
    recorder.onStep = (step) => step === 1 && process.stop();
    expect(await process.outcome).toEqual({ status: 'stopped', step: 1 });
    expect(recorder.checkpoints).toEqual([0, 1]);
  }, 60_000);

  it('can be killed at once', async () => {
    const recorder = sink();
    const process = new TrainingProcess(processes, spec, 'wasm', null, recorder);
    recorder.onStep = (step) => step === 0 && process.kill();
    expect(await process.outcome).toEqual({ status: 'killed' });
    expect(recorder.steps).toEqual([0]);
  }, 60_000);
});

describe('TrainingProcess when things fail', () => {
  it('ends, with the child stopped, when the sink cannot store a step', async () => {
    const recorder = sink();
    recorder.failStep = 2;
    const process = new TrainingProcess(processes, spec, 'wasm', null, recorder);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([process.outcome, new Promise((resolve) => (timer = setTimeout(() => resolve('still running after 20 s'), 20_000)))]);
    clearTimeout(timer);
    expect(outcome).toEqual({ status: 'write-failed', error: 'could not store step 2: disk on fire' });
    expect(recorder.steps).toEqual([0, 1]);
  }, 30_000);

  it('reports a child that could not be started instead of throwing its error event', async () => {
    const outcome = await new TrainingProcess(processes, spec, 'wasm', null, sink(), { execPath: '/nonexistent/node' }).outcome;
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/^training process could not start: spawn \/nonexistent\/node ENOENT/) });
  }, 30_000);
});

import { useTestBackend } from '../../test/support/tf';
import { parseJobSpec } from '../training/spec/validate';
import { Trainer } from '../training/trainer';
import { jobProgress } from './job-progress';

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + seconds * 1000);
const spec = { training: { warmup: { kind: 'demonstrations', steps: 150 } } };
const running = { status: 'running', currentStep: 0, totalSteps: 200, latestMetrics: null, spec };

describe('jobProgress', () => {
  it('reads the warm-up from the trainer’s last report in this attempt: 50 of 150 after 20 s', () => {
    const readings = { processStartedAt: at(0), warmupReport: { message: 'warm-up demonstrations 50/150 loss 0.4321', at: at(20) }, recentSteps: [] };
    // 20 s for 50 steps = 0.4 s a step; 100 left = 40 s, 5 of which have passed since the report.
    expect(jobProgress(running, readings, at(25))).toEqual({ warmup: { kind: 'demonstrations', steps: 150, completed: 50, etaSeconds: 100 * (20 / 50) - 5 }, eta: null });
  });

  it('ignores a report of an earlier attempt, and counts the warm-up done once step 0 is stored', () => {
    const stale = { processStartedAt: at(100), warmupReport: { message: 'warm-up demonstrations 125/150 loss 0.1', at: at(50) }, recentSteps: [] };
    expect(jobProgress(running, stale, at(101)).warmup).toEqual({ kind: 'demonstrations', steps: 150, completed: 0, etaSeconds: null });
    expect(jobProgress({ ...running, latestMetrics: { 'eval/sampled/success': 0.5 } }, stale, at(101)).warmup).toEqual({ kind: 'demonstrations', steps: 150, completed: 150, etaSeconds: null });
    expect(jobProgress({ ...running, spec: { training: { warmup: { kind: 'none', steps: 0 } } } }, stale, at(101)).warmup).toBeNull();
  });

  it('times the newest steps of this attempt for the ETA: 3 s a step, 190 steps left', () => {
    const steps = [10, 9, 8, 7, 6].map((step) => ({ step, at: at(100 + 3 * step) }));
    // One step from before a resume (at 10 s) is left out: its gap is not the pace.
    const readings = { processStartedAt: at(115), warmupReport: null, recentSteps: [...steps, { step: 5, at: at(10) }] };
    const { eta } = jobProgress({ ...running, currentStep: 10, latestMetrics: {} }, readings, at(131));
    // 12 s over 4 steps = 3 s a step; 190 × 3 = 570 s from the newest step (at 130 s), 1 s ago.
    expect(eta).toEqual({ seconds: 190 * ((130 - 118) / (10 - 6)) - 1, finishAt: at(131 + 569).toISOString(), secondsPerStep: 3 });
    expect(jobProgress({ ...running, currentStep: 10, latestMetrics: {} }, { ...readings, recentSteps: steps.slice(0, 1) }, at(131)).eta).toBeNull();
    expect(jobProgress({ ...running, status: 'paused', currentStep: 10, latestMetrics: {} }, readings, at(131)).eta).toBeNull();
  });

  it('parses the warm-up line the trainer really writes', async () => {
    await useTestBackend();
    const tiny = parseJobSpec({ environment: { id: 'bandit' }, algorithm: { id: 'starpo-s-grpo' }, model: { config: { layers: 1, dModel: 16, contextLength: 40 } }, rollout: { groups: 1, groupSize: 2, maxTokensPerTurn: 12 }, training: { steps: 1, evalEpisodes: 2, warmup: { steps: 25, batchSize: 2 } } });
    const trainer = await Trainer.create(tiny, { backend: 'wasm' });
    const lines: string[] = [];
    await trainer.run({ onLog: (line) => lines.push(line), shouldStop: () => trainer.step >= 0 });
    trainer.dispose();
    const report = lines.filter((line) => line.startsWith('warm-up')).pop()!;
    const readings = { processStartedAt: at(0), warmupReport: { message: report, at: at(10) }, recentSteps: [] };
    expect(jobProgress({ ...running, spec: tiny }, readings, at(10)).warmup).toMatchObject({ kind: 'format', steps: 25, completed: 25 });
  }, 30_000);
});

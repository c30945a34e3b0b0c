import { useTestBackend } from '../../test/support/tf';
import type { Metrics } from './signals/step-metrics';
import { parseJobSpec } from './spec/validate';
import { Trainer } from './trainer';

const spec = () =>
  parseJobSpec({
    environment: { id: 'bandit' },
    algorithm: { id: 'starpo-s-grpo' },
    model: { config: { layers: 1, dModel: 16, contextLength: 40 } },
    rollout: { groups: 1, groupSize: 2, maxTokensPerTurn: 12 },
    training: { steps: 1, evalEvery: 0, evalEpisodes: 2, checkpointEvery: 1, warmup: { steps: 30, batchSize: 4 } },
  });

const deterministic = (metrics: Metrics) => Object.fromEntries(Object.entries(metrics).filter(([name]) => !name.startsWith('perf/') && name !== 'warmup/ms'));

/** A pause or preempt during the warm-up: asked between its steps, it abandons the warm-up, and the next run trains it again to the same weights. */
describe('Trainer stopped during the warm-up', () => {
  beforeAll(useTestBackend);

  it('stops between two warm-up steps, stores nothing, and a later run from scratch equals an uninterrupted one', async () => {
    const interrupted = await Trainer.create(spec());
    let asked = 0;
    const reports: string[] = [];
    const result = await interrupted.run({ shouldStop: () => ++asked > 10, onStep: (step) => void reports.push(`step ${step}`), onCheckpoint: (step) => void reports.push(`checkpoint ${step}`), onLog: (line) => void reports.push(line) });
    interrupted.dispose();
    // Asked before each of the 30 steps: the 11th question stops it after 10 steps, before step 0.
    expect(result).toEqual({ status: 'stopped', step: -1 });
    expect(asked).toBe(11);
    // The 10th step's progress report (every WARMUP_REPORT_EVERY = 10 steps), then the stop: no step, no checkpoint.
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/^warm-up format 10\/30 loss \d+\.\d{4}$/);
    expect(reports[1]).toBe('warm-up format stopped after 10/30 steps; it starts over when the job resumes');

    const run = async () => {
      const trainer = await Trainer.create(spec());
      const steps = new Map<number, Metrics>();
      await trainer.run({ onStep: (step, metrics) => void steps.set(step, deterministic(metrics)), shouldStop: () => false });
      trainer.dispose();
      return steps;
    };
    const [again, straight] = [await run(), await run()];
    expect([...again.keys()]).toEqual([0, 1]);
    expect(again).toEqual(straight);
  }, 60_000);
});

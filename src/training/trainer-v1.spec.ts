import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestBackend } from '../../test/support/tf';
import type { Metrics } from './signals/step-metrics';
import { parseStoredJobSpec } from './spec/validate';
import { Trainer } from './trainer';

const FIXTURES = join(__dirname, '../../test/fixtures');

describe('a job stored before spec version 2', () => {
  beforeAll(useTestBackend);

  // The fixture was written by the code before version 2: a FrozenLake PPO job's resolved spec,
  // its step-2 checkpoint and the metrics of steps 3 and 4 of the uninterrupted run.
  it('resumes from its checkpoint and trains on as it would have', async () => {
    const spec = parseStoredJobSpec(JSON.parse(readFileSync(join(FIXTURES, 'v1-frozenlake.spec.json'), 'utf8')));
    const expected: Record<string, Metrics> = JSON.parse(readFileSync(join(FIXTURES, 'v1-frozenlake-steps3-4.json'), 'utf8'));
    const trainer = await Trainer.create(spec, { resumeFrom: readFileSync(join(FIXTURES, 'v1-frozenlake-step2.ckpt')) });
    expect(trainer.step).toBe(2);
    const steps = new Map<number, Metrics>();
    await trainer.run({ onStep: (step, metrics) => void steps.set(step, metrics) });
    trainer.dispose();
    expect([...steps.keys()]).toEqual([3, 4]);
    for (const step of [3, 4]) {
      const got = steps.get(step)!;
      for (const [name, value] of Object.entries(expected[step])) {
        if (name.startsWith('perf/')) continue;
        if (value === null) expect(got[name]).toBeNaN();
        else expect([name, got[name]]).toEqual([name, expect.closeTo(value, 4)]);
      }
    }
    // The evaluation (every 2 steps) keeps the one series such jobs had.
    expect(Object.keys(steps.get(4)!).filter((name) => name.startsWith('eval/')).sort()).toEqual(['eval/format_valid', 'eval/return', 'eval/success']);
  }, 60_000);
});

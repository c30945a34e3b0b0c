import { useTestBackend } from '../../test/support/tf';
import { curriculumEnvConfig, taskChangeSteps } from './curriculum';
import type { TrajectoryRecord } from './records';
import type { CollapseMonitor } from './signals/collapse';
import { parseJobSpec } from './spec/validate';
import { Trainer } from './trainer';

describe('curriculumEnvConfig', () => {
  it("gives the first share of a phase's steps (rounded) the curriculum's config over the job's", () => {
    const job = { size: 4, slippery: true };
    const curriculum = { curriculumShare: 0.5, curriculumConfig: { slippery: false } };
    // 0.5 × 200 = 100: steps 0…99 are the curriculum's, step 100 is the first of the job's own.
    expect(curriculumEnvConfig(job, curriculum, 0, 200)).toEqual({ size: 4, slippery: false });
    expect(curriculumEnvConfig(job, curriculum, 99, 200)).toEqual({ size: 4, slippery: false });
    expect(curriculumEnvConfig(job, curriculum, 100, 200)).toBe(job);
    // 0.3 × 5 = 1.5 rounds to 2; a share of 0 never applies the curriculum, 1 always does.
    expect([0, 1, 2].map((i) => curriculumEnvConfig(job, { ...curriculum, curriculumShare: 0.3 }, i, 5).slippery)).toEqual([false, false, true]);
    expect(curriculumEnvConfig(job, { curriculumShare: 0 }, 0, 5)).toBe(job);
    expect(curriculumEnvConfig(job, { ...curriculum, curriculumShare: 1 }, 4, 5).slippery).toBe(false);
  });

  it('names the step after the curriculum, numbered from 1, where the task changes within the job', () => {
    // Steps 1…100 (indices 0…99) play the curriculum; step 101 is the first on the job's task.
    expect(taskChangeSteps({ curriculumShare: 0.5 }, 200)).toEqual([101]);
    expect(taskChangeSteps({ curriculumShare: 0.3 }, 5)).toEqual([3]);
    expect(taskChangeSteps({ curriculumShare: 0 }, 200)).toEqual([]);
    expect(taskChangeSteps({ curriculumShare: 1 }, 200)).toEqual([]);
  });
});

/** The rows of a FrozenLake map in a transcript's first observation. */
const firstMapRows = (record: TrajectoryRecord) => record.text!.split('\n> ')[0].split('\n').filter((line) => /^[P_OG]+$/.test(line)).length;

describe('the RL curriculum (training.curriculumShare)', () => {
  beforeAll(useTestBackend);

  it("draws the first share of the RL steps' episodes from the curriculum's config, then the job's", async () => {
    const spec = parseJobSpec({
      environment: { id: 'frozenlake', config: { size: 4 } },
      algorithm: { id: 'starpo-s-grpo' },
      model: { config: { layers: 1, dModel: 16 } },
      rollout: { groups: 2, groupSize: 2, maxTurns: 2 },
      training: { steps: 2, evalEvery: 0, evalEpisodes: 2, checkpointEvery: 0, trajectoryTextSample: 4, warmup: { kind: 'none' }, curriculumShare: 0.5, curriculumConfig: { size: 3 } },
    });
    const rows = new Map<number, number[]>();
    const logs: string[] = [];
    const trainer = await Trainer.create(spec);
    const newTask = jest.spyOn((trainer as unknown as { monitor: CollapseMonitor }).monitor, 'newTask');
    let newTaskBeforeStep2 = false;
    await trainer.run({
      onTrajectories: (step, records) => void rows.set(step, records.map(firstMapRows)),
      onStep: (step) => void (step === 2 && (newTaskBeforeStep2 = newTask.mock.calls.length === 1)),
      onLog: (message) => void logs.push(message),
    });
    trainer.dispose();
    // 0.5 × 2 steps = 1: step 1 plays 3×3 maps, step 2 the job's 4×4.
    expect(rows.get(1)).toEqual([3, 3, 3, 3]);
    expect(rows.get(2)).toEqual([4, 4, 4, 4]);
    // The collapse monitor starts afresh on the job's task, once, and the job's log says so.
    expect([newTaskBeforeStep2, newTask.mock.calls.length]).toEqual([true, 1]);
    expect(logs.filter((m) => m.startsWith('curriculum:'))).toEqual(['curriculum: done after step 1; training episodes from environment.config from step 2']);
  }, 60_000);
});

import { useTestBackend } from '../../test/support/tf';
import type { LrSchedule } from './spec/job-spec';
import { parseJobSpec } from './spec/validate';
import { LOOKUP_QA_DEFAULTS } from './envs/lookup-qa';
import { Trainer } from './trainer';
import type { Learner } from './update';
import { warmupEnvConfig } from './warmup-phase';

const spec = (steps: number, lrSchedule: LrSchedule) =>
  parseJobSpec({
    environment: { id: 'bandit' },
    algorithm: { id: 'starpo-s-grpo' },
    model: { config: { layers: 1, dModel: 16, contextLength: 40 } },
    rollout: { groups: 1, groupSize: 2, maxTokensPerTurn: 12 },
    training: { steps: 1, evalEvery: 0, evalEpisodes: 2, checkpointEvery: 0, warmup: { steps, batchSize: 4, learningRate: 0.01, lrSchedule } },
  });

/** The actor's weights right after the warm-up (the run stops once step 0 is reported). */
async function warmedUp(steps: number, lrSchedule: LrSchedule): Promise<Float32Array> {
  const trainer = await Trainer.create(spec(steps, lrSchedule));
  let warm = false;
  await trainer.run({ onStep: (step) => void (warm ||= step === 0), shouldStop: () => warm });
  const { actor } = (trainer as unknown as { learner: Learner }).learner;
  const weights = Float32Array.from(actor.namedVariables().flatMap(([, variable]) => Array.from(variable.dataSync())));
  trainer.dispose();
  return weights;
}

/**
 * The warm-up's cosine schedule (training.warmup.lrSchedule) scales step i of n by
 * 0.1 + 0.9 · ½(1 + cos(π(i − 1)/(n − 1))). Over two steps that is 1, then 0.1 + 0.9 · ½(1 + cos π)
 * = 0.1. Both runs take the same first step from the same weights, and Adam's moments depend only
 * on the gradients, so the second step's update under cosine is exactly 0.1 × the constant one's.
 */
describe('the warm-up learning-rate schedule', () => {
  beforeAll(useTestBackend);

  it('takes the first step at the full rate and the last of two at a tenth of it', async () => {
    const [first, constant, cosine] = [await warmedUp(1, 'constant'), await warmedUp(2, 'constant'), await warmedUp(2, 'cosine')];
    expect(Array.from(await warmedUp(1, 'cosine'))).toEqual(Array.from(first));
    const moved = constant.map((w, i) => w - first[i]);
    expect(Math.max(...moved.map(Math.abs))).toBeGreaterThan(1e-3);
    let largest = 0;
    for (let i = 0; i < first.length; i++) largest = Math.max(largest, Math.abs(cosine[i] - first[i] - 0.1 * moved[i]));
    expect(largest).toBeLessThan(1e-6);
  }, 60_000);
});

describe('the warm-up curriculum (training.warmup.curriculumShare)', () => {
  it("draws the first curriculumShare of the steps' episodes from the curriculum's config over the job's, then the job's", () => {
    const job = parseJobSpec({
      environment: { id: 'lookup-qa', config: { graphSize: 8 } },
      algorithm: { id: 'starpo-s' },
      training: { warmup: { steps: 10, curriculumShare: 0.25, curriculumConfig: { maxHops: 1 } } },
    });
    const full = { ...LOOKUP_QA_DEFAULTS, graphSize: 8 };
    // 0.25 × 10 = 2.5 rounds to 3: steps 0, 1 and 2 are the curriculum's; step 3 is the first of the job's own.
    expect([0, 2].map((i) => warmupEnvConfig(job, i))).toEqual([{ ...full, maxHops: 1 }, { ...full, maxHops: 1 }]);
    expect([3, 9].map((i) => warmupEnvConfig(job, i))).toEqual([full, full]);
  });
});

import { baselines } from '../../src/training/experiment/baselines';
import { parseJobSpec } from '../../src/training/spec/validate';
import { trainTracking } from '../support/learning';
import { useTestBackend } from '../support/tf';

/**
 * The default lookup-qa job from demonstrations (only the environment and the preset are given):
 * its recipe's model and imitation, 3,200 steps of 64 turns with the token shift, the first half
 * on questions of at most two hops (recipes.ts), then a few StarPO-S steps under RAGEN's protocol
 * (256 held-out questions sampled at 0.5).
 *
 * The answer is a recall: the name after the question's relation in the search result just
 * shown. Without the two-hop curriculum the imitation learned it at a step that differed by seed,
 * and seed 2 had not after 3,200 steps (0.230); with it, seeds 1–3 imitate the expert to
 * 1.000, 0.988 and 1.000 (docs/learning-defaults.md). This test trains seed 2's whole warm-up:
 * 0.988 after it and 0.996 after 5 RL steps (random 0.040), in 7 minutes beside two other runs
 * on the 2 cores. Beside CI's other learning tests it would take CI past its 15 minutes, so it runs only with STARLAB_LONG_LEARNING=1 (`npm run test:learning-long`), and CI
 * pins the recipe's settings (validate.spec.ts).
 *
 * What must hold: the imitation answers far more questions than the random agent on the same
 * seeds (random 0.040), well above the 23–29% every imitation without the curriculum stalled at
 * on this seed, and RL keeps it.
 */
/** The RL steps this test trains after the default warm-up; the seed that stalled without the curriculum. */
const RL_STEPS = 5;
const SEED = 2;

describe('learning: the default lookup-qa job (StarPO-S from demonstrations)', () => {
  beforeAll(useTestBackend);

  it('imitates the expert far above random and above the stall without the curriculum, and RL keeps it', async () => {
    const job = { environment: { id: 'lookup-qa' }, algorithm: { id: 'starpo-s' } };
    const defaults = parseJobSpec(job);
    expect(defaults.model.config).toMatchObject({ dModel: 32, layers: 2, tokenShift: true });
    expect(defaults.training.warmup).toMatchObject({ kind: 'demonstrations', steps: 3200, batchSize: 64, lrSchedule: 'constant', curriculumShare: 0.5, curriculumConfig: { maxHops: 2 } });
    const spec = parseJobSpec({ ...job, training: { steps: RL_STEPS, evalEvery: RL_STEPS, seed: SEED, checkpointEvery: 0 } });
    expect([spec.model.config, spec.training.warmup]).toEqual([defaults.model.config, defaults.training.warmup]);
    const { random } = await baselines(spec);
    const { evals } = await trainTracking(spec);
    const afterWarmup = evals.get(0)!;
    const final = evals.get(RL_STEPS)!;
    console.log(`lookup-qa: random ${random.toFixed(3)}, eval ${afterWarmup.toFixed(3)} after the imitation -> ${final.toFixed(3)} after ${RL_STEPS} RL steps`);
    expect(afterWarmup).toBeGreaterThanOrEqual(Math.max(random + 0.5, 0.6));
    expect(final).toBeGreaterThanOrEqual(afterWarmup - 0.05);
  }, 1_800_000);
});

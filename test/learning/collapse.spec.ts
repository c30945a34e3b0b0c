import { SUITE, score, trainSeries } from '../../bench/collapse';
import { useTestBackend } from '../support/tf';

/**
 * Two runs of bench/collapse, trained for real with their fixed seeds and scored with the default
 * detectors: a Bandit run at a high learning rate that first learns the high arm and then
 * collapses, and a healthy StarPO-S run. (About half a minute each on two cores.)
 *
 * The collapsing run learns the high arm and then its responses stop parsing for good. Its updates
 * are too large from the start (median KL per step above kl_overshoot's limit by step 5), which is
 * what gives the lead this test requires (at least 10 steps); the healthy run's stay well below it.
 */
describe('collapse warnings on real training runs (bench/collapse suite)', () => {
  beforeAll(useTestBackend);
  const run = (name: string) => SUITE.find((r) => r.name === name)!;

  it('warns at least 10 steps before a collapsing run collapses', async () => {
    const collapsing = run('bandit-s-lr5e-3');
    const result = score(collapsing.name, collapsing.expectation, await trainSeries(collapsing));
    console.log(`${collapsing.name}: collapse at ${result.collapse}, first warning ${JSON.stringify(result.firstWarning)}`);
    expect(result.collapse).not.toBeNull();
    expect(result.firstWarning).not.toBeNull();
    expect(result.lead).toBeGreaterThanOrEqual(10);
    expect(result.firstWarning!.severity).not.toBe('info');
  }, 300_000);

  it('raises no warning at all on a healthy run', async () => {
    const healthy = run('bandit-s-lr1e-3');
    const result = score(healthy.name, healthy.expectation, await trainSeries(healthy));
    console.log(`${healthy.name}: collapse ${result.collapse}, warnings ${result.warnings.map((w) => `${w.step}:${w.detector}/${w.severity}`).join(' ') || 'none'}`);
    expect(result.collapse).toBeNull();
    expect(result.warnings.filter((w) => w.severity === 'critical')).toEqual([]);
    expect(result.warnings).toEqual([]); // score() keeps warning and critical ones: none at all
  }, 300_000);
});

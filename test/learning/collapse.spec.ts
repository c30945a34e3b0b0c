import { SUITE, score, trainSeries } from '../../bench/collapse';
import { useTestBackend } from '../support/tf';

/**
 * Three runs of bench/collapse, trained for real with their fixed seeds and scored with the default
 * detectors: an abrupt break (vanilla PPO on the Bandit at a learning rate of 0.01, which its
 * first update already overshoots), a slow drift (AEPO on the Bandit at 1e-3) and a healthy
 * StarPO-S run.
 *
 * The abrupt run's success falls below half of what it had within a few steps. No window over
 * several steps can see that coming in time; the single step's `kl/update` can (kl_spike), and
 * the warning must come at least one step before the fall.
 */
describe('collapse warnings on real training runs (bench/collapse suite)', () => {
  beforeAll(useTestBackend);
  const run = (name: string) => SUITE.find((r) => r.name === name)!;

  it('warns at least one step before an abrupt break', async () => {
    const breaking = run('bandit-ppo-lr0.01');
    const result = score(breaking.name, breaking.expectation, await trainSeries(breaking));
    const fall = result.collapse ?? result.declined;
    console.log(`${breaking.name}: fell at ${fall}, first warning ${JSON.stringify(result.firstWarning ?? result.warnings[0])}`);
    expect(fall).not.toBeNull();
    expect(fall!).toBeGreaterThanOrEqual(2);
    const first = result.warnings[0];
    expect(first.severity).not.toBe('info');
    expect(first.step).toBeLessThanOrEqual(fall! - 1);
  }, 300_000);

  it('warns at least one step before a slow drift from the first step', async () => {
    // AEPO on the Bandit at its default learning rate moves away from the better arm from step 1:
    // no single update is large and success halves only after ten steps (success_slide's case).
    const drifting = run('bandit-aepo');
    const result = score(drifting.name, drifting.expectation, await trainSeries(drifting));
    const fall = result.collapse ?? result.declined;
    console.log(`${drifting.name}: fell at ${fall}, warnings ${result.warnings.map((w) => `${w.step}:${w.detector}`).join(' ')}`);
    expect(fall).not.toBeNull();
    expect(result.warnings[0].step).toBeLessThanOrEqual(fall! - 1);
  }, 300_000);

  it('raises no warning at all on a healthy run', async () => {
    const healthy = run('bandit-s-lr1e-3');
    const result = score(healthy.name, healthy.expectation, await trainSeries(healthy));
    console.log(`${healthy.name}: collapse ${result.collapse}, warnings ${result.warnings.map((w) => `${w.step}:${w.detector}/${w.severity}`).join(' ') || 'none'}`);
    expect(result.collapse).toBeNull();
    expect(result.warnings).toEqual([]); // score() keeps warning and critical ones: none at all
  }, 300_000);
});

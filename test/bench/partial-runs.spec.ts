import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PARTIAL_EVERY, PartialProgress, PartialRuns, benchPartialRuns } from '../../bench/partial-runs';
import { trainRun } from '../../bench/runs';

const progress = (step: number): PartialProgress => ({ step, curve: { 0: 0.5 }, warnings: [], monitor: { 'success/rate': [0.25] }, warmupReused: false, seconds: 3, resumedAt: [] });

/** A Bandit job small enough to train past the first partial checkpoint in seconds. */
const STEPS = PARTIAL_EVERY + 2;
const KEY = { steps: STEPS, seed: 1 };
const SPEC = {
  name: 'partial-run',
  environment: { id: 'bandit' },
  algorithm: { id: 'starpo-s' },
  model: { config: { dModel: 16, layers: 1, heads: 1 } },
  rollout: { groups: 2, groupSize: 4 },
  training: { steps: STEPS, seed: 1, evalEvery: 4, evalEpisodes: 8, checkpointEvery: 0, warmup: { steps: 2 } },
};

describe('bench partial runs', () => {
  let dir: string;
  const saved = { partial: process.env.STARLAB_PARTIAL_RUNS, warmups: process.env.STARLAB_WARMUP_CACHE };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'partial-'));
    process.env.STARLAB_WARMUP_CACHE = 'off';
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [name, value] of [['STARLAB_PARTIAL_RUNS', saved.partial], ['STARLAB_WARMUP_CACHE', saved.warmups]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('gives back what a run saved, to that run only, and nothing after it is removed', () => {
    const runs = new PartialRuns(join(dir, 'nested'));
    expect(runs.load('a#1')).toBeNull();
    runs.save('a#1', progress(10), new Uint8Array([1, 2, 3]));
    runs.save('a#1', progress(20), new Uint8Array([4, 5]));
    const loaded = runs.load('a#1')!;
    expect([loaded.progress, [...loaded.checkpoint]]).toEqual([progress(20), [4, 5]]);
    expect(readdirSync(join(dir, 'nested'))).toEqual([expect.stringMatching(/^[0-9a-f]{16}\.partial$/)]);
    expect(runs.load('a#2')).toBeNull();
    // A file at a run's name that records another run (a digest collision) is not resumed.
    const header = Buffer.from(JSON.stringify({ id: 'b#1', progress: progress(10) }));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length, 0);
    writeFileSync(runs.path('a#2'), Buffer.concat([length, header]));
    expect(runs.load('a#2')).toBeNull();
    runs.remove('a#1');
    expect(runs.load('a#1')).toBeNull();
    expect(benchPartialRuns('off')).toBeUndefined();
  });

  it('resumes a run stopped after its checkpoint and ends it as the uninterrupted run', async () => {
    process.env.STARLAB_PARTIAL_RUNS = 'off';
    const whole = await trainRun(KEY, 'partial#1', SPEC, () => undefined);

    process.env.STARLAB_PARTIAL_RUNS = dir;
    const stopAfter = PARTIAL_EVERY + 1;
    const stopped = trainRun(KEY, 'partial#1', SPEC, (step) => {
      if (step === stopAfter) throw new Error('killed');
    });
    await expect(stopped).rejects.toThrow('killed');
    const partial = new PartialRuns(dir).load('partial#1')!;
    expect(partial.progress.step).toBe(PARTIAL_EVERY);
    expect(partial.progress.monitor['success/rate']).toHaveLength(PARTIAL_EVERY);

    const steps: number[] = [];
    const resumed = await trainRun(KEY, 'partial#1', SPEC, (step) => steps.push(step));
    expect(steps).toEqual([PARTIAL_EVERY + 1, PARTIAL_EVERY + 2]);
    expect(resumed.resumedAt).toEqual([PARTIAL_EVERY]);
    expect([resumed.curve, resumed.monitor, resumed.warnings, resumed.afterRl]).toEqual([whole.curve, whole.monitor, whole.warnings, whole.afterRl]);
    // Bit-for-bit: every step's entropy and gradient norm, not only the evaluations, match.
    expect(whole.monitor!['entropy/mean'].every((x) => typeof x === 'number' && x > 0)).toBe(true);
    expect(whole.resumedAt).toBeUndefined();
    // Stored, the run leaves no partial file behind.
    expect(existsSync(new PartialRuns(dir).path('partial#1'))).toBe(false);
  }, 120_000);
});

import type { AlgorithmResult } from '../../bench/algorithms';
import { aepoClaims } from '../../bench/algorithms-claims';
import { CellSummary, summarise, windowMean } from '../../bench/algorithms-summary';
import { replayWarnings } from '../../bench/runs';

/** A stored run with just what the summary reads. */
let seed = 0;
const run = (afterRl: number, entropy: number[], extra: Partial<AlgorithmResult['series']> = {}): AlgorithmResult =>
  ({ key: { seed: ++seed }, afterRl, afterWarmup: 0.1, seconds: 120, series: { entropy, ...extra } }) as unknown as AlgorithmResult;

describe('bench/algorithms summary', () => {
  it('takes a tenth of the series (at least one step) at its start, middle and end', () => {
    const xs = Array.from({ length: 20 }, (_, i) => i + 1); // 1..20, tenths of 2 steps
    expect(windowMean(xs, 'start')).toBe((1 + 2) / 2);
    expect(windowMean(xs, 'mid')).toBe((10 + 11) / 2); // steps 10 and 11: from index 10 − 1
    expect(windowMean(xs, 'end')).toBe((19 + 20) / 2);
    expect(windowMean([4, 6], 'end')).toBe(6);
  });

  it('averages over seeds; a series one seed lacks is not reported', () => {
    const s = summarise([run(0.2, [1, 1, 3, 5], { toolCalls: [2, 2, 2, 2] }), run(0.4, [1, 1, 1, 1])])!;
    expect(s.success).toEqual({ mean: (0.2 + 0.4) / 2, min: 0.2, max: 0.4 });
    // The second half of [1, 1, 3, 5] is [3, 5]: std 1; of [1, 1, 1, 1] 0.
    expect(s.entropy).toEqual({ start: 1, mid: (3 + 1) / 2, end: (5 + 1) / 2, lateStd: (1 + 0) / 2 });
    expect(s.toolCalls).toBeUndefined();
    expect(s.minutes).toBe(2);
  });
});

describe('bench runs: collapse warnings replayed from the stored monitor inputs', () => {
  it("replays today's detectors where a run kept its inputs, and keeps what older runs raised", () => {
    // kl/update 2 at step 1 (> kl_spike's 0.5), small after; the stored warning list is stale.
    const steps = 12;
    const monitor = {
      'success/rate': Array(steps).fill(0.5),
      'kl/update': Array.from({ length: steps }, (_, i) => (i === 0 ? 2 : 0.01)),
      'format/valid_rate': [0.95, null, ...Array(steps - 2).fill(0.95)],
    };
    expect(replayWarnings({ warnings: [{ step: 5, detector: 'kl_overshoot', severity: 'warning' }], monitor })).toEqual([{ step: 1, detector: 'kl_spike', severity: 'warning' }]);
    const older = [{ step: 5, detector: 'kl_overshoot', severity: 'warning' }];
    expect(replayWarnings({ warnings: older })).toBe(older);
    expect(replayWarnings({})).toBeUndefined();
    const s = summarise([{ ...run(0.2, [1]), monitor } as AlgorithmResult, { ...run(0.2, [1]), warnings: [] } as AlgorithmResult, run(0.2, [1])])!;
    expect(s.firstWarnings).toEqual(['step 1 kl_spike', 'none', '–']);
  });
});

describe("bench/algorithms: AEPO's claims", () => {
  const cell = (success: number, distinct: number, end: number, lateStd: number): CellSummary => ({
    seeds: 3,
    success: { mean: success, min: success - 0.01, max: success + 0.01 },
    afterWarmup: 0.1,
    firstWarnings: ['none', 'none', 'none'],
    distinct,
    entropy: { start: 0.5, mid: 0.5, end, lateStd },
    minutes: 1,
  });

  it('says "not measured" for each claim whose cells are missing', () => {
    expect(aepoClaims(() => undefined).map((c) => c.verdict)).toEqual(['not measured', 'not measured', 'not measured']);
  });

  it('judges each claim either way from the cells', () => {
    const cells: Record<string, CellSummary> = { aepo: cell(0.3, 6, 0.4, 0.01), arpo: cell(0.2, 5, 0.3, 0.05), 'starpo-grpo': cell(0.27, 4, 0.2, 0.01) };
    const claims = aepoClaims((preset) => cells[preset]);
    // 6 > 5 distinct sequences; end entropy 0.4 ≥ 0.3 and late std 0.01 < 0.05; 30% − 27% = 3 points, below 5.
    expect(claims.map((c) => c.verdict)).toEqual(['holds', 'holds', 'partly']);
    expect(claims[2].detail).toBe('eval success 30.0 (29.0–31.0) vs 27.0 (26.0–28.0): +3.0 points');
    const worse = aepoClaims((preset) => ({ ...cells, aepo: cell(0.2, 5, 0.2, 0.1) })[preset]);
    expect(worse.map((c) => c.verdict)).toEqual(['does not hold', 'does not hold', 'does not hold']);
  });
});

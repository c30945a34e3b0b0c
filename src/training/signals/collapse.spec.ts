import { CollapseMonitor, DEFAULT_DETECTORS, MONITOR_INPUTS, backtest, collapseStep } from './collapse';
import { DETECTOR_TABLE, smoothedNoise } from './detectors';
import { METRIC } from './step-metrics';
import type { Metrics } from './step-metrics';

/** A series whose every metric is given per step by a function. */
function series(steps: number, at: (step: number) => Metrics): { step: number; metrics: Metrics }[] {
  return Array.from({ length: steps }, (_, i) => ({ step: i + 1, metrics: at(i + 1) }));
}

const steady: Metrics = {
  'success/rate': 0.5,
  'reward/std_in_group': 0.4,
  'entropy/mean': 1,
  'grad_norm/actor': 0.5,
  'diversity/template_share': 0.2,
  'diversity/distinct_ratio': 0.8,
  'format/valid_rate': 0.95,
};

describe('CollapseMonitor', () => {
  it('stays quiet on a steady run', () => {
    expect(backtest(series(80, () => steady))).toEqual([]);
  });

  it('warns once when in-group reward std falls below 0.3× its peak before success converges, and re-arms after recovery', () => {
    // std 0.4 for 20 steps, then 0. EMA with window 10 (α = 2/11) decays as 0.4·(9/11)^k, and
    // falls below 0.3 × 0.4 = 0.12 once (9/11)^k < 0.3: k = 6 ((9/11)^6 = 0.29999), i.e. step 26.
    const run = series(60, (s) => ({ ...steady, 'reward/std_in_group': s <= 20 || s > 45 ? 0.4 : 0 }));
    const warnings = backtest(run).filter((w) => w.detector === 'reward_std_drop');
    expect(warnings.map((w) => w.step)).toEqual([26]);
    expect(warnings[0].value).toBeCloseTo(0.4 * (9 / 11) ** 6, 4);
    expect(warnings[0].threshold).toBeCloseTo(0.3 * 0.4, 4);
    expect(warnings[0].severity).toBe('info'); // see DEFAULT_DETECTORS: it fired on healthy FrozenLake plateaus
    expect(warnings[0].message).toMatch(/In-group reward std fell/);
    // Recovery: from step 46 the EMA climbs back above 1.5 × 0.12 = 0.18 at step 48
    // (0.4 − 0.397·(9/11)^3 = 0.18) and stays there for the 10-step window, so it re-arms at 57
    // and warns again when std falls a second time: 0.380·(9/11)^k < 0.12 → k = 6 → step 66.
    const again = series(80, (s) => ({ ...steady, 'reward/std_in_group': s <= 20 || (s > 45 && s <= 60) ? 0.4 : 0 }));
    expect(backtest(again).filter((w) => w.detector === 'reward_std_drop').map((w) => w.step)).toEqual([26, 66]);
  });

  it('warns once, not at every crossing, while a noisy signal hovers around its threshold', () => {
    // After the drop the std alternates 0.02 / 0.2: its EMA swings around the limit 0.12 but
    // never stays above the recovery level 0.18 for a whole window, so the warning stays latched.
    const run = series(120, (s) => ({ ...steady, 'reward/std_in_group': s <= 20 ? 0.4 : s % 4 < 2 ? 0.02 : 0.2 }));
    expect(backtest(run).filter((w) => w.detector === 'reward_std_drop')).toHaveLength(1);
  });

  it('does not call low variance and entropy a collapse once success has converged', () => {
    const converged = series(60, (s) => ({ ...steady, 'success/rate': 1, 'reward/std_in_group': s < 20 ? 0.4 : 0, 'entropy/mean': s < 20 ? 1 : 0.01 }));
    expect(backtest(converged).filter((w) => ['reward_std_drop', 'entropy_collapse'].includes(w.detector))).toEqual([]);
  });

  it('flags entropy below 0.15× its post-warm-up level', () => {
    // Reference = mean of steps 1–5 = 1; EMA after the drop to 0: (9/11)^k < 0.15 → k = 10.
    const run = series(50, (s) => ({ ...steady, 'entropy/mean': s <= 20 ? 1 : 0 }));
    const warnings = backtest(run).filter((w) => w.detector === 'entropy_collapse');
    expect(warnings.map((w) => w.step)).toEqual([30]);
    // informational by default: in bench/collapse it never came first before a collapse
    expect(warnings[0].severity).toBe('info');
  });

  it('keeps a converged run converged through a small dip, and reopens the diversity alarms below 0.75', () => {
    // success 0.9 (converged), then 0.78 with no variance and one template, then 0.6.
    const run = series(80, (s) => ({
      ...steady,
      'success/rate': s <= 30 ? 0.9 : s <= 60 ? 0.78 : 0.6,
      'reward/std_in_group': s <= 30 ? 0.4 : 0.02,
      'diversity/template_share': s <= 30 ? 0.2 : 1,
      'diversity/distinct_ratio': s <= 30 ? 0.8 : 0.1,
    }));
    const alarms = backtest(run).filter((w) => ['reward_std_drop', 'template_collapse'].includes(w.detector));
    // EMA at step 60 ≈ 0.78 + 0.12·(9/11)^30 = 0.7803 ≥ 0.75; step 61: 0.7803 + (2/11)(0.6 − 0.7803) = 0.7475 < 0.75.
    expect(alarms.map((w) => `${w.step}:${w.detector}`)).toEqual(['61:reward_std_drop', '61:template_collapse']);
  });

  it('flags a sustained fall of the valid-format rate, not a one-step parse failure', () => {
    // peak 0.95, limit 0.75·0.95 = 0.7125; EMA after the fall to 0.5: 0.5 + 0.45·(9/11)^k < 0.7125
    // → (9/11)^k < 0.472 → k = 4 → step 14.
    const fall = series(40, (s) => ({ ...steady, 'format/valid_rate': s <= 10 ? 0.95 : 0.5 }));
    const [drop] = backtest(fall).filter((w) => w.detector === 'format_drop');
    expect(drop).toMatchObject({ step: 14, severity: 'warning', threshold: 0.7125 });
    // one step at 0.2: EMA 0.95 − (2/11)·0.75 = 0.814 = 0.86× the peak, above 0.75×
    expect(backtest(series(40, (s) => ({ ...steady, 'format/valid_rate': s === 20 ? 0.2 : 0.95 })))).toEqual([]);
    // a model that never produced valid actions (no format warm-up) has nothing to fall from
    expect(backtest(series(40, (s) => ({ ...steady, 'format/valid_rate': s <= 10 ? 0.05 : 0.01 })))).toEqual([]);
  });

  it('re-arms the format detector once the rate has been back above halfway to its peak for a window', () => {
    // back above (1 + 0.75)/2 · 0.95 = 0.831 from step 26 (k = 6), re-armed at step 35; the second
    // fall from 0.949 crosses 0.7125 after k = 4 steps → step 54.
    const twice = series(70, (s) => ({ ...steady, 'format/valid_rate': (s > 10 && s <= 20) || s > 50 ? 0.5 : 0.95 }));
    expect(backtest(twice).filter((w) => w.detector === 'format_drop').map((w) => w.step)).toEqual([14, 54]);
  });

  it('raises a critical warning when the gradient norm exceeds 50× its recent level', () => {
    const run = series(40, (s) => ({ ...steady, 'grad_norm/actor': s === 30 ? 25.01 : 0.5 }));
    const [spike] = backtest(run).filter((w) => w.detector === 'grad_norm_spike');
    expect(spike).toMatchObject({ step: 30, severity: 'critical', value: 25.01, threshold: 50 * 0.5 });
    // exactly at the threshold is not a spike
    expect(backtest(series(40, (s) => ({ ...steady, 'grad_norm/actor': s === 30 ? 25 : 0.5 }))).filter((w) => w.detector === 'grad_norm_spike')).toEqual([]);
  });

  it('measures spikes against the rolling mean when most steps carry no gradient', () => {
    // Three steps in four have no learning signal (norm 0.001): the median of the last 20 is
    // 0.001 and every ordinary step (0.4) would be 400× it. The mean is (15·0.001 + 5·0.4)/20 =
    // 0.10075, so the reference is 0.10075 and only a norm above 50 × 0.10075 = 5.04 is a spike.
    const sparse = (s: number) => (s % 4 === 0 ? 0.4 : 0.001);
    expect(backtest(series(60, (s) => ({ ...steady, 'grad_norm/actor': sparse(s) }))).filter((w) => w.detector === 'grad_norm_spike')).toEqual([]);
    const [spike] = backtest(series(60, (s) => ({ ...steady, 'grad_norm/actor': s === 41 ? 6 : sparse(s) }))).filter((w) => w.detector === 'grad_norm_spike');
    expect(spike.step).toBe(41);
    expect(spike.threshold).toBeCloseTo(50 * ((15 * 0.001 + 5 * 0.4) / 20), 3); // warnings round to 4 decimals
  });

  describe('kl_overshoot (rolling median of the per-step policy shift)', () => {
    const limit = DEFAULT_DETECTORS.kl_overshoot.threshold;
    const small = limit / 5;
    const large = 4 * limit;
    const overshoots = (run: { step: number; metrics: Metrics }[]) => backtest(run).filter((w) => w.detector === 'kl_overshoot');

    it('warns when most recent steps moved the policy too far', () => {
      // Small steps 1–10, large from 11. The history starts at the detector's warm-up, step 5, and
      // holds at most 20 values: at step 15 it is 6 small (5–10) and 5 large, median small; at
      // step 16 it is 6 and 6, and the median is the mean of the middle two,
      // (limit/5 + 4·limit)/2 = 2.1·limit: the first step above the limit.
      const [warning] = overshoots(series(40, (s) => ({ ...steady, 'kl/update': s <= 10 ? small : large })));
      expect(warning).toMatchObject({ step: 16, signal: 'kl/update', severity: 'warning' });
      expect(warning.value).toBeCloseTo(2.1 * limit, 4);
      expect(warning.threshold).toBeCloseTo(limit, 6);
      expect(warning.message).toMatch(/Updates are too large/);
    });

    it('ignores isolated large steps, and waits for ten samples', () => {
      // One step in four is large: the median of any window stays small.
      expect(overshoots(series(80, (s) => ({ ...steady, 'kl/update': s % 4 === 0 ? 10 * limit : small })))).toEqual([]);
      // Large from the start: counted from step 5, step 14 is the first with ten samples.
      expect(overshoots(series(20, () => ({ ...steady, 'kl/update': large }))).map((w) => w.step)).toEqual([14]);
      // The first updates after a warm-up move the policy most (AEPO on lookup-qa in
      // bench/algorithms: 0.166, 0.158, 0.018, 0.036, then 0.02–0.44 with a median of 0.03). A
      // median of steps 1–10 is (0.047 + 0.091)/2 = 0.069, above the limit; from step 5 on it is
      // (0.033 + 0.035)/2 = 0.034: no warning.
      const settling = [0.166, 0.158, 0.018, 0.036, 0.091, 0.031, 0.047, 0.117, 0.032, 0.441, 0.035, 0.018, 0.019, 0.033];
      expect(overshoots(series(30, (s) => ({ ...steady, 'kl/update': settling[s - 1] ?? small })))).toEqual([]);
    });

    it('starts afresh when the learning rate changes (a rollback) but not on a plain resume', () => {
      const monitor = new CollapseMonitor();
      monitor.useLearningRate(0.004);
      const large20 = series(20, () => ({ ...steady, 'kl/update': large }));
      expect(large20.flatMap((row) => monitor.observe(row.step, row.metrics)).map((w) => w.step)).toEqual([14]);
      const state = monitor.getState();
      // Resumed at the same rate: still latched, no repeat of the warning.
      const same = new CollapseMonitor();
      same.setState(state);
      same.useLearningRate(0.004);
      expect(same.observe(21, { ...steady, 'kl/update': large })).toEqual([]);
      // Resumed at half the rate: the old sizes are forgotten; small steps now stay quiet, and
      // large ones warn again once ten have been seen (steps 21–30).
      const halved = () => {
        const m = new CollapseMonitor();
        m.setState(state);
        m.useLearningRate(0.002);
        return m;
      };
      const quiet = halved();
      expect(Array.from({ length: 10 }, (_, i) => quiet.observe(21 + i, { ...steady, 'kl/update': small })).flat()).toEqual([]);
      const loud = halved();
      expect(Array.from({ length: 10 }, (_, i) => loud.observe(21 + i, { ...steady, 'kl/update': large })).flat().map((w) => w.step)).toEqual([30]);
    });
  });

  it('flags one response for most states with uniform groups, and the lagging success drop', () => {
    const template = series(40, (s) => ({ ...steady, 'diversity/template_share': s > 20 ? 1 : 0.2, 'diversity/distinct_ratio': s > 20 ? 0.1 : 0.8 }));
    // template EMA passes 0.9 when 1 − 0.8·(9/11)^k > 0.9 → k = 11 → step 31.
    expect(backtest(template).filter((w) => w.detector === 'template_collapse').map((w) => w.step)).toEqual([31]);
    const falling = series(60, (s) => ({ ...steady, 'success/rate': s <= 30 ? 0.8 : 0.2 }));
    // success EMA 0.8 → 0.2 + 0.6·(9/11)^k < 0.5·0.8 = 0.4 → (9/11)^k < 1/3 → k = 6 → step 36,
    // the collapse step itself: this detector confirms a collapse, the others warn before it.
    const [drop] = backtest(falling).filter((w) => w.detector === 'success_drop');
    expect(drop.step).toBe(36);
    // Success started at 0.8 and never rose: by the collapse definition there is nothing to
    // collapse from. Rising first (0.5 for ten steps, then 0.8) makes the same fall a collapse.
    expect(collapseStep(falling)).toBeNull();
    const risen = series(60, (s) => ({ ...steady, 'success/rate': s <= 10 ? 0.5 : s <= 30 ? 0.8 : 0.2 }));
    const peak = 0.8 - 0.3 * (9 / 11) ** 20; // EMA after 20 steps at 0.8 from 0.5
    const k = Array.from({ length: 30 }, (_, i) => i + 1).find((n) => 0.2 + (peak - 0.2) * (9 / 11) ** n < 0.5 * peak)!;
    expect(k).toBe(6);
    expect(collapseStep(risen)).toBe(30 + 6);
  });

  it('warns of a slide below 0.7× the peak before success_drop confirms the fall', () => {
    // success 0.5 for ten steps, then 0.2. EMA = 0.2 + 0.3·(9/11)^k. success_slide: below
    // 0.7·0.5 = 0.35 once (9/11)^k < 0.5: (9/11)^3 = 0.548, (9/11)^4 = 0.448 → k = 4, step 14.
    // success_drop: below 0.25 once (9/11)^k < 1/6: (9/11)^8 = 0.201, (9/11)^9 = 0.165 → step 19.
    const sliding = series(40, (s) => ({ ...steady, 'success/rate': s <= 10 ? 0.5 : 0.2 }));
    const warnings = backtest(sliding).filter((w) => ['success_slide', 'success_drop'].includes(w.detector));
    expect(warnings.map((w) => [w.step, w.detector, w.threshold])).toEqual([[14, 'success_slide', 0.35], [19, 'success_drop', 0.25]]);
    expect(warnings[0].value).toBeCloseTo(0.2 + 0.3 * (9 / 11) ** 4, 4);
    // A dip to 0.8× the peak for four steps is no slide: its EMA bottoms at 0.4 + 0.1·(9/11)^4 = 0.445 > 0.35.
    const dip = series(40, (s) => ({ ...steady, 'success/rate': s > 10 && s <= 14 ? 0.4 : 0.5 }));
    expect(backtest(dip).filter((w) => w.detector === 'success_slide')).toEqual([]);
  });

  it("starts afresh where a curriculum ends: the easier task's success is no peak to fall from", () => {
    // The same fall from 0.5 to 0.2 at step 11 (a slide at 14, a drop at 19 above) is the task
    // changing when the monitor is told so: nothing fires, and a later fall on the new task does.
    const switched = series(40, (s) => ({ ...steady, 'success/rate': s <= 10 ? 0.5 : 0.2 }));
    expect(backtest(switched, [], [11]).filter((w) => w.severity !== 'info')).toEqual([]);
    const fallsAgain = series(60, (s) => ({ ...steady, 'success/rate': s <= 10 ? 0.5 : s <= 40 ? 0.4 : 0.1 }));
    const [slide] = backtest(fallsAgain, [], [11]).filter((w) => w.detector === 'success_slide');
    expect(slide.step).toBeGreaterThan(40);
    // The last severe warning (the drop at step 19), which tags checkpoints, outlives the reset.
    const monitor = new CollapseMonitor();
    for (const row of series(20, (s) => ({ ...steady, 'success/rate': s <= 10 ? 0.5 : 0.2 }))) monitor.observe(row.step, row.metrics);
    expect(monitor.health(20)).toBe('suspect');
    monitor.newTask();
    expect(monitor.getState()).toMatchObject({ ema: {}, history: {}, active: {}, lastSevere: { step: 19 } });
  });

  it('measures the noise of smoothed success from successive differences', () => {
    // Steps 1–14 of the slide above: differences are twelve 0s and one −0.3 (mean −0.3/13).
    // Σ(d − mean)² = (0.3 − 0.3/13)² + 12·(0.3/13)² = 0.076686 + 0.006391 = 0.083077; /12 →
    // variance 0.0069231, std 0.083205; /√2 = 0.058835 per step; × √(α/(2 − α)) = √0.1 → 0.018605.
    const values = [...Array(10).fill(0.5), ...Array(4).fill(0.2)];
    expect(smoothedNoise(values, 10)).toBeCloseTo(0.018605, 5);
    // A steady drift has no noise: every difference is the same (the floor, 1e-3, remains).
    expect(smoothedNoise([0.5, 0.45, 0.4, 0.35, 0.3], 10)).toBe(1e-3);
    expect(smoothedNoise([0.5, 0.4, 0.3], 10)).toBeUndefined();
  });

  it('does not call a fall within the noise of success a slide', () => {
    // Success alternates 0.3 / 0.1 (mean 0.2) from a first step of 0.3: the smoothed value settles
    // near 0.2, below 0.7 × its peak 0.3 = 0.21, but each step moves success by ±0.2. The noise is
    // about 0.2/√2·√0.1 = 0.045, and a gap of 0.3 − 0.2 = 0.1 is ~2 of those, far from 6.
    const noisy = series(60, (s) => ({ ...steady, 'success/rate': s % 2 ? 0.3 : 0.1 }));
    expect(backtest(noisy).filter((w) => w.detector === 'success_slide')).toEqual([]);
    // The premise: the ratio alone would hold. With β = 9/11 the EMA's lows (after a 0.1) approach
    // L = (0.3·β + 0.1)/(1 + β) = (0.2455 + 0.1)/1.8182 = 0.190, below 0.21.
    let smoothed = 0.3;
    const lows = noisy.slice(1).map(({ metrics }) => (smoothed += (2 / 11) * (metrics['success/rate'] - smoothed)));
    expect(Math.min(...lows)).toBeCloseTo((0.3 * (9 / 11) + 0.1) / (1 + 9 / 11), 3);
    expect(Math.min(...lows)).toBeLessThan(0.7 * 0.3);
    // Nor a fall of the smoothed value below half the peak (success_drop): 0.3 for five steps,
    // then 0.25 / 0 in turn (Sokoban near random level swings like this). The EMA's lows approach
    // (0.25·β)/(1 + β) = 0.1125, below 0.15; the noise is about 0.25/√2·√0.1 = 0.056, and the gap
    // 0.3 − 0.1125 = 0.19 is ~3.4 of those.
    const swinging = series(60, (s) => ({ ...steady, 'success/rate': s <= 5 ? 0.3 : s % 2 ? 0.25 : 0 }));
    expect(backtest(swinging).filter((w) => w.detector.startsWith('success_'))).toEqual([]);
    // The same fall with no noise warns: from a plateau at 0.3 to a steady 0.15.
    const quietFall = series(60, (s) => ({ ...steady, 'success/rate': s <= 20 ? 0.3 : 0.15 }));
    expect(backtest(quietFall).filter((w) => w.detector === 'success_slide')).toHaveLength(1);
    expect(backtest(series(60, (s) => ({ ...steady, 'success/rate': s <= 20 ? 0.3 : 0.1 }))).filter((w) => w.detector === 'success_drop')).toHaveLength(1);
  });

  it('measures falls from a credible peak: a lucky first draw is worth one raw sample less its noise', () => {
    // Success 0.5, then 0.3, 0.3, 0.3, then 0.05 for good. At step 4 the differences −0.2, 0, 0
    // (mean −0.2/3) give σ = √(((−0.2 + 0.2/3)² + 2·(0.2/3)²)/2)/√2 = 0.081650 per step. The EMA
    // (α = 2/11) and its variance in units of σ² (1, then (9/11)²·v + (2/11)²):
    //   0.5 (1), 0.463636 (0.702479), 0.433884 (0.503313), 0.409541 (0.369984).
    // Less one deviation each: 0.418350, 0.395202, 0.375957, 0.359877: the credible peak is
    // 0.5 − σ = 0.418350, and later, lower values never raise it. success_slide's limit is 0.7× it.
    const sigma = Math.sqrt(((-0.2 + 0.2 / 3) ** 2 + 2 * (0.2 / 3) ** 2) / 2) / Math.SQRT2;
    expect(sigma).toBeCloseTo(0.08165, 5);
    const run = series(40, (s) => ({ ...steady, 'success/rate': s === 1 ? 0.5 : s <= 4 ? 0.3 : 0.05 }));
    const [slide] = backtest(run).filter((w) => w.detector === 'success_slide');
    expect(slide.threshold).toBeCloseTo(0.7 * (0.5 - sigma), 4);
  });

  it('does not take a lucky first step for a level the run fell from', () => {
    // Sokoban near random level: one lucky first step at 0.45, then success swings around 0.2
    // (0.2, 0.3, 0.1, 0.25, 0.15 in turn; step-to-step noise ≈ 0.1). Measured from the raw first
    // value, 0.45, the smoothed success near 0.2 is below half of it and the gap of 0.25 is over
    // six of its settled noise (≈ 0.1·√0.1 = 0.03). Measured from the credible peak, about
    // 0.45 − 0.1 = 0.35, its half is 0.175, below where success settles.
    const cycle = [0.2, 0.3, 0.1, 0.25, 0.15];
    const lucky = series(80, (s) => ({ ...steady, 'success/rate': s === 1 ? 0.45 : cycle[s % 5] }));
    expect(backtest(lucky).filter((w) => w.detector.startsWith('success_'))).toEqual([]);
    // The same start, then a real fall to 0.05: warned.
    const fall = series(80, (s) => ({ ...steady, 'success/rate': s === 1 ? 0.45 : s <= 30 ? cycle[s % 5] : 0.05 }));
    expect(backtest(fall).filter((w) => w.detector === 'success_drop')).toHaveLength(1);
  });

  it('resumes a monitor state kept before credible peaks: its peak counts as credible', () => {
    const before = new CollapseMonitor();
    for (const { step, metrics } of series(20, () => steady)) before.observe(step, metrics);
    const legacy = before.getState();
    delete legacy.emaVariance;
    delete legacy.credible;
    const resumed = new CollapseMonitor();
    resumed.setState(legacy);
    const warnings = series(60, (s) => ({ ...steady, 'success/rate': s <= 20 ? 0.5 : 0.1 })).slice(20).flatMap(({ step, metrics }) => resumed.observe(step, metrics));
    expect(warnings.find((w) => w.detector === 'success_slide')).toMatchObject({ threshold: 0.7 * 0.5 });
  });

  it('applies per-job rules: disable, threshold, severity, warm-up', () => {
    const run = series(40, (s) => ({ ...steady, 'grad_norm/actor': s === 30 ? 25.01 : 0.5 }));
    expect(backtest(run, [{ detector: 'grad_norm_spike', enabled: false }])).toEqual([]);
    expect(backtest(run, [{ detector: 'grad_norm_spike', threshold: 60 }])).toEqual([]);
    expect(backtest(run, [{ detector: 'grad_norm_spike', severity: 'warning' }])[0].severity).toBe('warning');
    expect(backtest(run, [{ detector: 'grad_norm_spike', warmupSteps: 35 }])).toEqual([]);
  });

  it('tags checkpoints from the signals and resumes with identical state', () => {
    const monitor = new CollapseMonitor();
    const run = series(40, (s) => ({ ...steady, 'grad_norm/actor': s === 30 ? 25.01 : 0.5 }));
    run.slice(0, 20).forEach((row) => monitor.observe(row.step, row.metrics));
    expect(monitor.health(20)).toBe('healthy');
    const copy = new CollapseMonitor();
    copy.setState(monitor.getState());
    const rest = (m: CollapseMonitor) => run.slice(20).flatMap((row) => m.observe(row.step, row.metrics));
    expect(rest(copy)).toEqual(rest(monitor));
    expect(monitor.health(40)).toBe('unhealthy');
  });

  it('flags a single update far outside the trust region in the step it happens, from step 1', () => {
    // kl/update 2.0 at step 1 (> 0.5): warned at once, before any median over a window exists.
    const run = series(30, (s) => ({ ...steady, 'kl/update': s === 1 ? 2 : s === 12 ? 0.9 : 0.01 }));
    const spikes = backtest(run).filter((w) => w.detector === 'kl_spike');
    // Re-armed after 10 clear steps (2..11 are below 0.5 / 1.5), so step 12 warns again.
    expect(spikes.map((w) => [w.step, w.value, w.threshold, w.severity])).toEqual([[1, 2, 0.5, 'warning'], [12, 0.9, 0.5, 'warning']]);
    expect(spikes[0].message).toMatch(/One update moved the policy by 2\.00 nats per token/);
    expect(backtest(series(30, () => ({ ...steady, 'kl/update': 0.3 }))).filter((w) => w.detector === 'kl_spike')).toEqual([]);
  });
});

describe('template_collapse', () => {
  const template = { 'diversity/template_share': 1, 'diversity/distinct_ratio': 0.1 };
  it('stays quiet while success is still rising (a task whose right answer is the same everywhere)', () => {
    // Success climbs 0.3 → 0.8 over 50 steps: every smoothed step is a new peak.
    const rising = series(50, (s) => ({ ...steady, ...template, 'success/rate': 0.3 + 0.01 * s }));
    expect(backtest(rising).filter((w) => w.detector === 'template_collapse')).toEqual([]);
  });

  it('warns once success has not set a new peak for a window', () => {
    // Flat at 0.3 from the start: the peak is set at step 1 and never beaten, so from step 11
    // (10 steps without a new peak) the template counts; the detector's warm-up is 10 steps too.
    const flat = series(40, () => ({ ...steady, ...template, 'success/rate': 0.3 }));
    expect(backtest(flat).filter((w) => w.detector === 'template_collapse').map((w) => w.step)).toEqual([11]);
  });
});

describe('the detector table', () => {
  it('reads only MONITOR_INPUTS: a series cut down to them backtests the same', () => {
    // Every detector fires somewhere in this series; the extra metric must change nothing.
    const run = series(80, (s) => ({
      ...steady,
      'success/rate': s <= 20 ? 0.3 + 0.02 * s : 0.1,
      'reward/std_in_group': s <= 30 ? 0.4 : 0,
      'entropy/mean': s <= 30 ? 1 : s % 2 ? 0.01 : 0.3,
      'grad_norm/actor': s === 50 ? 100 : 0.5,
      'kl/update': s === 1 || s > 40 ? 1 : 0.01,
      'diversity/template_share': s > 30 ? 1 : 0.2,
      'diversity/distinct_ratio': s > 30 ? 0.1 : 0.8,
      'format/valid_rate': s > 60 ? 0.3 : 0.95,
      'diversity/identical_groups': s / 80,
    }));
    const cut = run.map(({ step, metrics }) => ({ step, metrics: Object.fromEntries(MONITOR_INPUTS.map((name) => [name, metrics[name]])) }));
    const full = backtest(run);
    expect(new Set(full.map((w) => w.detector)).size).toBe(DETECTOR_TABLE.length);
    expect(backtest(cut)).toEqual(full);
  });

  it('watches canonical metric names, one entry per detector id', () => {
    const names = new Set<string>(Object.values(METRIC));
    for (const detector of DETECTOR_TABLE) expect([detector.id, names.has(detector.signal)]).toEqual([detector.id, true]);
    expect(new Set(DETECTOR_TABLE.map((d) => d.id)).size).toBe(DETECTOR_TABLE.length);
  });
});

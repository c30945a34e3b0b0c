import { Static, Type } from '@sinclair/typebox';
import { mean, unbiasedStd } from '../algorithms/stats';
import type { Metrics } from './step-metrics';

export const DETECTORS = ['reward_std_drop', 'entropy_collapse', 'entropy_erratic', 'grad_norm_spike', 'kl_overshoot', 'template_collapse', 'format_drop', 'success_drop'] as const;
export type DetectorId = (typeof DETECTORS)[number];
export type Severity = 'info' | 'warning' | 'critical';
export type CheckpointHealth = 'healthy' | 'suspect' | 'unhealthy';

/** A per-job override of one detector (`collapse.rules` in the job spec). */
export const CollapseRuleSchema = Type.Object(
  {
    detector: Type.Union(DETECTORS.map((d) => Type.Literal(d)), { description: 'which detector this rule changes' }),
    enabled: Type.Optional(Type.Boolean()),
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1000, description: 'the detector’s threshold (see GET /v1/algorithms for the defaults)' })),
    severity: Type.Optional(Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')])),
    window: Type.Optional(Type.Integer({ minimum: 2, maximum: 200, description: 'smoothing / rolling window in steps' })),
    warmupSteps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'steps before the detector may fire' })),
  },
  { additionalProperties: false },
);
export type CollapseRule = Static<typeof CollapseRuleSchema>;

export interface DetectorConfig {
  enabled: boolean;
  threshold: number;
  severity: Severity;
  window: number;
  warmupSteps: number;
}

/**
 * Defaults, calibrated on bench/collapse (see its output for lead times and false alarms):
 * - reward_std_drop: smoothed in-group reward std below `threshold` × its running peak while
 *   success has not converged — RAGEN's early sign: outcomes stop differing within a group.
 *   Informational by default: in bench/collapse it fired on 3 of 9 healthy runs (StarPO-S on
 *   FrozenLake settles on one answer per map, and then groups agree), and with kl_overshoot in
 *   place it was never the first warning of a run that collapsed.
 * - entropy_collapse: smoothed token entropy below `threshold` × its level after the warm-up
 *   while success has not converged. Informational by default: in bench/collapse it never fired
 *   before another warning on a collapsing run, and it fired on five runs that did not collapse
 *   (a policy that settles on one answer per state has low entropy by design).
 * - entropy_erratic: rolling coefficient of variation of entropy above `threshold`.
 * - grad_norm_spike: pre-clip actor gradient norm above `threshold` × its recent level, the
 *   larger of the rolling median and mean (critical: RAGEN found collapse usually irreversible
 *   after one). Healthy runs in bench/collapse reach 28× that level (heavy-tailed norms of a
 *   tiny model), and no spike there preceded a collapse, hence 50: a backstop for divergence.
 * - kl_overshoot: rolling median of `kl/update` (the KL between the policy before and after a
 *   step's update, per token) above `threshold`: steps too large for the trust region PPO
 *   assumes (Spinning Up's PPO stops a step's epochs at 1.5 × its target of 0.01). In
 *   bench/collapse it is the one signal that comes tens of steps before the abrupt breaks. The
 *   medians of healthy runs stayed at or below 0.041. Runs at too high a learning rate reached
 *   0.07–0.67, and those that broke crossed 0.05 between 32 and 99 steps before. A median,
 *   because single steps spike on every run. In effect it says the learning rate is too high for
 *   this policy, which is also why it fires early.
 * - template_collapse: one response given for more than `threshold` of the initial states,
 *   with little diversity inside groups, while success has not converged.
 * - format_drop: smoothed share of responses that parse as actions below `threshold` × its
 *   running peak. The collapses bench/collapse produces are abrupt: within a step or two the
 *   responses stop parsing. At a learning rate that is too high the same thing happens first for
 *   a few steps and heals, well before the break for good (16 and 92 steps in the suite). 0.75
 *   sits between those early episodes (0.737× at step 6 of a Bandit run that broke at step 19,
 *   0.732× at step 12 of a FrozenLake run that broke at 104) and the worst dip of a healthy run
 *   (0.787× on slippery FrozenLake): a thin margin on either side, so a job whose format is
 *   noisier by nature may need its own threshold.
 * - success_drop: smoothed success below `threshold` × its running peak — the lagging signal,
 *   which at 0.5 confirms exactly the collapse that bench/collapse measures lead times against;
 *   it may fire from step 3, as a high learning rate can break a policy within five steps.
 * Every detector latches when it fires and re-arms only after its signal has been back beyond
 * the threshold by RECOVERY_BAND for a whole window.
 */
export const DEFAULT_DETECTORS: Record<DetectorId, DetectorConfig> = {
  reward_std_drop: { enabled: true, threshold: 0.3, severity: 'info', window: 10, warmupSteps: 10 },
  entropy_collapse: { enabled: true, threshold: 0.15, severity: 'info', window: 10, warmupSteps: 10 },
  entropy_erratic: { enabled: true, threshold: 0.5, severity: 'info', window: 10, warmupSteps: 10 },
  grad_norm_spike: { enabled: true, threshold: 50, severity: 'critical', window: 20, warmupSteps: 10 },
  kl_overshoot: { enabled: true, threshold: 0.05, severity: 'warning', window: 20, warmupSteps: 5 },
  template_collapse: { enabled: true, threshold: 0.9, severity: 'warning', window: 10, warmupSteps: 10 },
  format_drop: { enabled: true, threshold: 0.75, severity: 'warning', window: 10, warmupSteps: 3 },
  success_drop: { enabled: true, threshold: 0.5, severity: 'warning', window: 10, warmupSteps: 3 },
};

/** kl_overshoot needs at least this many steps of `kl/update` since the start or the last change of learning rate. */
const KL_MIN_SAMPLES = 5;

/** Success above this (smoothed) counts as converged: low variance and entropy are then expected. */
const CONVERGED_SUCCESS = 0.85;
/**
 * A converged run stays converged until success falls below this: a dip of a few points in a
 * solved task is success_drop's business and must not reopen every diversity alarm at once.
 */
const CONVERGED_RELEASE = 0.75;
/** A valid-format rate that never rose above this has nothing to fall from (no format warm-up). */
const MEANINGFUL_FORMAT_PEAK = 0.5;
/** A latched detector re-arms once its signal is this factor beyond the threshold (hysteresis). */
const RECOVERY_BAND = 1.5;
/** A peak of success or std below this is noise, not something to fall from. */
const MEANINGFUL_PEAK = 0.1;

export interface CollapseWarning {
  step: number;
  detector: DetectorId;
  /** The metric the detector watched (canonical name). */
  signal: string;
  value: number;
  threshold: number;
  severity: Severity;
  message: string;
}

/** Everything the monitor remembers, so a resumed run warns exactly as an uninterrupted one. */
export interface MonitorState {
  ema: Record<string, number>;
  peak: Record<string, number>;
  entropyReference: number[];
  /** Whether success has converged (latched between CONVERGED_SUCCESS and CONVERGED_RELEASE). */
  converged?: boolean;
  history: Record<string, number[]>;
  active: Partial<Record<DetectorId, boolean>>;
  /** Consecutive steps each latched detector's condition has been clear (it re-arms after `window`). */
  clearFor?: Partial<Record<DetectorId, number>>;
  lastSevere: { step: number; severity: Severity } | null;
  /** The learning rate the `kl/update` history was measured at (kl_overshoot restarts when it changes). */
  learningRate?: number;
}

const ema = (previous: number | undefined, value: number, window: number) => (previous === undefined ? value : previous + (2 / (window + 1)) * (value - previous));

/**
 * Watches the step metrics of one run and turns them into collapse warnings (docs/training.md, "Signals").
 * Each detector warns once when its condition starts to hold and re-arms when it clears.
 */
export class CollapseMonitor {
  readonly detectors: Record<DetectorId, DetectorConfig>;
  private state: MonitorState = { ema: {}, peak: {}, entropyReference: [], history: {}, active: {}, lastSevere: null };

  constructor(rules: readonly CollapseRule[] = []) {
    this.detectors = structuredClone(DEFAULT_DETECTORS);
    for (const rule of rules) {
      const { detector, ...override } = rule;
      Object.assign(this.detectors[detector], Object.fromEntries(Object.entries(override).filter(([, v]) => v !== undefined)));
    }
  }

  getState(): MonitorState {
    return structuredClone(this.state);
  }

  setState(state: MonitorState): void {
    this.state = structuredClone(state);
  }

  /**
   * Tells the monitor the learning rate the next steps train with. A run resumed at a different
   * rate (a rollback's override) starts kl_overshoot afresh: update sizes measured at the old
   * rate say nothing about the new one, and would otherwise re-fire the warning that caused the
   * rollback.
   */
  useLearningRate(learningRate: number): void {
    const s = this.state;
    if (s.learningRate !== undefined && s.learningRate !== learningRate) {
      delete s.history['kl/update'];
      s.active.kl_overshoot = false;
      delete s.clearFor?.kl_overshoot;
    }
    s.learningRate = learningRate;
  }

  /** Tag for a checkpoint taken now: unhealthy after a critical warning, suspect while any warning holds. */
  health(step: number): CheckpointHealth {
    const severe = this.state.lastSevere;
    if (severe?.severity === 'critical') return 'unhealthy';
    const anyActive = Object.entries(this.state.active).some(([id, on]) => on && this.detectors[id as DetectorId].severity !== 'info');
    if (anyActive || (severe && step - severe.step <= this.detectors.success_drop.window)) return 'suspect';
    return 'healthy';
  }

  observe(step: number, metrics: Metrics): CollapseWarning[] {
    if (step <= 0) return [];
    const s = this.state;
    const d = this.detectors;
    const warnings: CollapseWarning[] = [];
    const smooth = (name: string, window: number) => {
      const value = metrics[name];
      if (value === undefined || !Number.isFinite(value)) return s.ema[name];
      s.ema[name] = ema(s.ema[name], value, window);
      s.peak[name] = Math.max(s.peak[name] ?? -Infinity, s.ema[name]);
      return s.ema[name];
    };
    const remember = (name: string, window: number) => {
      const value = metrics[name];
      if (value === undefined || !Number.isFinite(value)) return;
      const list = (s.history[name] ??= []);
      list.push(value);
      if (list.length > window) list.shift();
    };
    const success = smooth('success/rate', d.success_drop.window) ?? 0;
    const converged = (s.converged = success >= (s.converged ? CONVERGED_RELEASE : CONVERGED_SUCCESS));
    const std = smooth('reward/std_in_group', d.reward_std_drop.window);
    const entropy = smooth('entropy/mean', d.entropy_collapse.window);
    const template = smooth('diversity/template_share', d.template_collapse.window);
    const distinct = smooth('diversity/distinct_ratio', d.template_collapse.window);
    if (s.entropyReference.length < 5 && metrics['entropy/mean'] !== undefined) s.entropyReference.push(metrics['entropy/mean']);
    remember('entropy/mean', d.entropy_erratic.window);
    const gradHistory = s.history['grad_norm/actor'] ?? [];
    // The median alone is a poor scale when most steps carry no learning signal (all groups
    // identical → gradient ≈ 0): then every ordinary step would look like a spike. The rolling
    // mean is lifted by those ordinary steps, so the larger of the two is the reference.
    const gradReference = gradHistory.length >= 5 ? Math.max(median(gradHistory), mean(gradHistory)) : undefined;

    // Hysteresis (a Schmitt trigger): a detector that fired stays latched until its signal has
    // been back beyond the threshold by RECOVERY_BAND for a whole window, so a noisy signal
    // hovering at the threshold is one warning, not ten.
    const clearFor = (s.clearFor ??= {});
    const check = (id: DetectorId, holds: boolean, recovered: boolean, signal: string, value: number, threshold: number, message: string) => {
      const config = d[id];
      if (!config.enabled || step < config.warmupSteps) return;
      if (holds && !s.active[id]) {
        warnings.push({ step, detector: id, signal, value: round(value), threshold: round(threshold), severity: config.severity, message });
        if (config.severity !== 'info' && (s.lastSevere?.severity !== 'critical' || config.severity === 'critical')) s.lastSevere = { step, severity: config.severity };
      }
      if (holds || (s.active[id] && !recovered)) {
        s.active[id] = true;
        clearFor[id] = 0;
      } else if (s.active[id]) {
        clearFor[id] = (clearFor[id] ?? 0) + 1;
        if (clearFor[id]! >= config.window) s.active[id] = false;
      }
    };

    if (std !== undefined) {
      const peak = s.peak['reward/std_in_group'];
      const limit = d.reward_std_drop.threshold * peak;
      check('reward_std_drop', peak >= MEANINGFUL_PEAK && std < limit && !converged, std > RECOVERY_BAND * limit || converged, 'reward/std_in_group', std, limit,
        `In-group reward std fell to ${fmt(std)}, below ${fmt(d.reward_std_drop.threshold)}× its peak ${fmt(peak)}, while success (${fmt(success)}) has not converged: samples of the same state have stopped differing — RAGEN's early sign of the Echo Trap, typically tens of steps before reward falls.`);
    }
    if (entropy !== undefined && s.entropyReference.length >= 5) {
      const reference = mean(s.entropyReference);
      const limit = d.entropy_collapse.threshold * reference;
      check('entropy_collapse', entropy < limit && !converged, entropy > RECOVERY_BAND * limit || converged, 'entropy/mean', entropy, limit,
        `Token entropy fell to ${fmt(entropy)}, below ${fmt(d.entropy_collapse.threshold)}× its post-warm-up level ${fmt(reference)}, while success (${fmt(success)}) has not converged: the policy stopped exploring before it solved the task.`);
    }
    const recent = s.history['entropy/mean'] ?? [];
    if (recent.length >= d.entropy_erratic.window) {
      const cv = unbiasedStd(recent) / Math.max(mean(recent), 1e-8);
      check('entropy_erratic', cv > d.entropy_erratic.threshold, cv < d.entropy_erratic.threshold / RECOVERY_BAND, 'entropy/mean', cv, d.entropy_erratic.threshold,
        `Token entropy is erratic: its coefficient of variation over the last ${recent.length} steps is ${fmt(cv)} (threshold ${fmt(d.entropy_erratic.threshold)}).`);
    }
    const grad = metrics['grad_norm/actor'];
    if (grad !== undefined && gradReference !== undefined) {
      const limit = d.grad_norm_spike.threshold * gradReference;
      check('grad_norm_spike', grad > limit, grad < limit / RECOVERY_BAND, 'grad_norm/actor', grad, limit,
        `Actor gradient norm spiked to ${fmt(grad)}, ${fmt(grad / gradReference)}× its recent level ${fmt(gradReference)} (the larger of the rolling median and mean). In RAGEN's runs a spike like this marked the point after which collapse was irreversible: consider rolling back to the last healthy checkpoint with a lower learning rate.`);
    }
    if (grad !== undefined && Number.isFinite(grad)) remember('grad_norm/actor', d.grad_norm_spike.window);
    remember('kl/update', d.kl_overshoot.window);
    const shifts = s.history['kl/update'] ?? [];
    if (shifts.length >= Math.min(KL_MIN_SAMPLES, d.kl_overshoot.window)) {
      const typical = median(shifts);
      const limit = d.kl_overshoot.threshold;
      check('kl_overshoot', typical > limit, typical < limit / RECOVERY_BAND, 'kl/update', typical, limit,
        `Updates are too large: over the last ${shifts.length} steps the median KL between the policy before and after a step's update is ${fmt(typical)} nats per token, above ${fmt(limit)}. Steps this large broke runs in bench/collapse tens of steps later, often suddenly (responses stop parsing); lower the learning rate.`);
    }
    if (template !== undefined && distinct !== undefined) {
      const limit = d.template_collapse.threshold;
      check('template_collapse', template > limit && distinct < 0.25 && !converged, template < limit / RECOVERY_BAND || distinct > 0.25 * RECOVERY_BAND || converged, 'diversity/template_share', template, limit,
        `One response is given for ${fmt(100 * template)}% of the initial states and groups hardly vary (distinct ratio ${fmt(distinct)}), while success (${fmt(success)}) has not converged: the agent answers with a template whatever the state.`);
    }
    const valid = smooth('format/valid_rate', d.format_drop.window);
    if (valid !== undefined) {
      const validPeak = s.peak['format/valid_rate'];
      const limit = d.format_drop.threshold * validPeak;
      // Re-armed halfway back to the peak: RECOVERY_BAND × limit would lie above the peak itself.
      const recovered = valid > ((1 + d.format_drop.threshold) / 2) * validPeak;
      check('format_drop', validPeak >= MEANINGFUL_FORMAT_PEAK && valid < limit, recovered, 'format/valid_rate', valid, limit,
        `Only ${fmt(100 * valid)}% of responses still parse as actions, below ${fmt(d.format_drop.threshold)}× the peak ${fmt(100 * validPeak)}%: updates are overshooting what the policy had learned — the abrupt kind of collapse; a lower learning rate usually helps.`);
    }
    const successPeak = s.peak['success/rate'] ?? 0;
    const successLimit = d.success_drop.threshold * successPeak;
    check('success_drop', successPeak >= MEANINGFUL_PEAK && success < successLimit, success > RECOVERY_BAND * successLimit, 'success/rate', success, successLimit,
      `Success fell to ${fmt(success)}, below ${fmt(d.success_drop.threshold)}× its peak ${fmt(successPeak)}: the run is collapsing.`);
    return warnings;
  }
}

/** Replays stored step metrics through a monitor: what these rules would have said (backtests). */
export function backtest(series: readonly { step: number; metrics: Metrics }[], rules: readonly CollapseRule[] = []): CollapseWarning[] {
  const monitor = new CollapseMonitor(rules);
  return [...series].sort((a, b) => a.step - b.step).flatMap((row) => monitor.observe(row.step, row.metrics));
}

/**
 * The collapse step of a run for evaluating detectors (bench/collapse): the first step at which
 * smoothed success falls below half of its running peak, after having risen: the peak must be
 * at least `minPeak` and at least `minRise` above where smoothed success started. A run that only
 * declines from its first step never learned anything to collapse from (in bench/collapse such
 * runs peak exactly at step 1; every other run rose by 0.16 or more).
 */
export function collapseStep(series: readonly { step: number; metrics: Metrics }[], window = 10, minPeak = 0.2, minRise = 0.05): number | null {
  let smoothed: number | undefined;
  let start: number | undefined;
  let peak = 0;
  for (const row of [...series].sort((a, b) => a.step - b.step)) {
    const value = row.metrics['success/rate'];
    if (value === undefined || row.step <= 0) continue;
    smoothed = ema(smoothed, value, window);
    start ??= smoothed;
    peak = Math.max(peak, smoothed);
    if (peak >= minPeak && peak - start >= minRise && smoothed < 0.5 * peak) return row.step;
  }
  return null;
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));

import { mean, unbiasedStd } from '../algorithms/stats';
import { METRIC, type Metrics } from './step-metrics';

export type Severity = 'info' | 'warning' | 'critical';

export interface DetectorConfig {
  enabled: boolean;
  threshold: number;
  severity: Severity;
  window: number;
  warmupSteps: number;
}

/** A latched detector re-arms once its signal is this factor beyond the threshold (hysteresis). */
export const RECOVERY_BAND = 1.5;
/** A peak of success or std below this is noise, not something to fall from. */
const MEANINGFUL_PEAK = 0.1;
/** A valid-format rate that never rose above this has nothing to fall from (no format warm-up). */
const MEANINGFUL_FORMAT_PEAK = 0.5;
/**
 * success_slide and success_drop fire only when success lies this many standard deviations of its
 * smoothed noise below the peak. The peak is a maximum of that noise and the current value may
 * sit at its low, so where per-step success swings with the states drawn (lookup-qa, Sokoban near
 * random level) gaps of up to 5.3 such deviations came with no fall at all (bench/collapse.md).
 */
const FALL_NOISE_MARGIN = 6;
/**
 * Falls are measured from a credible peak: the highest the smoothed signal has been less this
 * many deviations of its own noise at the time. An EMA's first values are close to one raw sample
 * (√window times a settled EMA's noise), so a lucky first draw is no level to fall from; a settled
 * EMA loses only its own small deviation (bench/collapse.md).
 */
export const PEAK_CREDIBILITY = 1;
/**
 * kl_overshoot needs at least this many steps of `kl/update`, counted from its warm-up step (the
 * first updates after a warm-up move the policy most, and say nothing about the learning rate)
 * or from the last change of learning rate.
 */
export const KL_MIN_SAMPLES = 10;

/**
 * What every detector may read at one step: the raw metrics, the monitor's smoothed signals and
 * their running peaks, whether success has converged, and the rolling histories.
 */
export interface StepView {
  step: number;
  metrics: Metrics;
  /** Smoothed success (the window of success_drop). */
  success: number;
  /** The standard deviation of smoothed success from its step-to-step noise (smoothedNoise), once four steps are in. */
  successNoise: number | undefined;
  /** Success has converged (latched): low variance, entropy and diversity are then expected. */
  converged: boolean;
  smoothed: Readonly<Record<string, number | undefined>>;
  peak(name: string): number;
  /** The peak of success or of the valid-format rate less its own noise (PEAK_CREDIBILITY); the plain peak before four values. */
  crediblePeak(name: string): number;
  /** Steps since the smoothed signal last set a new peak (0 at a new peak). */
  sincePeak(name: string): number;
  /** Mean entropy of the first five steps, once there are five. */
  entropyReference: number | undefined;
  history(name: string): readonly number[];
  /** The scale a gradient spike is measured against (the larger of the rolling median and mean), once known. */
  gradReference: number | undefined;
}

/** One detector's reading at a step: whether its condition holds, whether a latched alarm may clear. */
export interface Reading {
  holds: boolean;
  recovered: boolean;
  value: number;
  threshold: number;
  message: string;
}

/** A collapse detector: the signal it watches, its defaults, and how it reads a step. */
export interface Detector {
  id: string;
  signal: string;
  defaults: DetectorConfig;
  read(view: StepView, config: DetectorConfig): Reading | null;
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));
const detector = (id: string, signal: string, defaults: DetectorConfig, read: Detector['read']): Detector => ({ id, signal, defaults, read });

/**
 * The detectors, in the order their warnings are reported. Each default is explained once, in
 * bench/collapse.md (the calibration runs, lead times and false alarms that set it); the comment
 * here says only what the detector means.
 */
export const DETECTOR_TABLE = [
  // RAGEN's early sign: outcomes stop differing within a group while success has not converged.
  detector('reward_std_drop', METRIC.rewardStdInGroup, { enabled: true, threshold: 0.3, severity: 'info', window: 10, warmupSteps: 10 }, (v, c) => {
    const std = v.smoothed[METRIC.rewardStdInGroup];
    if (std === undefined) return null;
    const peak = v.peak(METRIC.rewardStdInGroup);
    const limit = c.threshold * peak;
    return {
      holds: peak >= MEANINGFUL_PEAK && std < limit && !v.converged,
      recovered: std > RECOVERY_BAND * limit || v.converged,
      value: std,
      threshold: limit,
      message: `In-group reward std fell to ${fmt(std)}, below ${fmt(c.threshold)}× its peak ${fmt(peak)}, while success (${fmt(v.success)}) has not converged: samples of the same state have stopped differing — RAGEN's early sign of the Echo Trap, typically tens of steps before reward falls.`,
    };
  }),
  // The policy stopped exploring before it solved the task.
  detector('entropy_collapse', METRIC.entropyMean, { enabled: true, threshold: 0.15, severity: 'info', window: 10, warmupSteps: 10 }, (v, c) => {
    const entropy = v.smoothed[METRIC.entropyMean];
    if (entropy === undefined || v.entropyReference === undefined) return null;
    const limit = c.threshold * v.entropyReference;
    return {
      holds: entropy < limit && !v.converged,
      recovered: entropy > RECOVERY_BAND * limit || v.converged,
      value: entropy,
      threshold: limit,
      message: `Token entropy fell to ${fmt(entropy)}, below ${fmt(c.threshold)}× its post-warm-up level ${fmt(v.entropyReference)}, while success (${fmt(v.success)}) has not converged: the policy stopped exploring before it solved the task.`,
    };
  }),
  // Entropy swinging from step to step.
  detector('entropy_erratic', METRIC.entropyMean, { enabled: true, threshold: 0.5, severity: 'info', window: 10, warmupSteps: 10 }, (v, c) => {
    const recent = v.history(METRIC.entropyMean);
    if (recent.length < c.window) return null;
    const cv = unbiasedStd(recent) / Math.max(mean(recent), 1e-8);
    return {
      holds: cv > c.threshold,
      recovered: cv < c.threshold / RECOVERY_BAND,
      value: cv,
      threshold: c.threshold,
      message: `Token entropy is erratic: its coefficient of variation over the last ${recent.length} steps is ${fmt(cv)} (threshold ${fmt(c.threshold)}).`,
    };
  }),
  // A divergence backstop: RAGEN found collapse usually irreversible after a spike.
  detector('grad_norm_spike', METRIC.gradNormActor, { enabled: true, threshold: 50, severity: 'critical', window: 20, warmupSteps: 10 }, (v, c) => {
    const grad = v.metrics[METRIC.gradNormActor];
    if (grad === undefined || v.gradReference === undefined) return null;
    const limit = c.threshold * v.gradReference;
    return {
      holds: grad > limit,
      recovered: grad < limit / RECOVERY_BAND,
      value: grad,
      threshold: limit,
      message: `Actor gradient norm spiked to ${fmt(grad)}, ${fmt(grad / v.gradReference)}× its recent level ${fmt(v.gradReference)} (the larger of the rolling median and mean). In RAGEN's runs a spike like this marked the point after which collapse was irreversible: consider rolling back to the last healthy checkpoint with a lower learning rate.`,
    };
  }),
  // One update far outside any trust region: visible in the very step it happens.
  detector('kl_spike', METRIC.klUpdate, { enabled: true, threshold: 0.5, severity: 'warning', window: 10, warmupSteps: 1 }, (v, c) => {
    const shift = v.metrics[METRIC.klUpdate];
    if (shift === undefined || !Number.isFinite(shift)) return null;
    return {
      holds: shift > c.threshold,
      recovered: shift < c.threshold / RECOVERY_BAND,
      value: shift,
      threshold: c.threshold,
      message: `One update moved the policy by ${fmt(shift)} nats per token (KL between the policy before and after this step), above ${fmt(c.threshold)}: a step this large can break a policy within a few steps; lower the learning rate.`,
    };
  }),
  // Steps too large for the trust region PPO assumes, step after step: the learning rate is too high.
  detector('kl_overshoot', METRIC.klUpdate, { enabled: true, threshold: 0.05, severity: 'warning', window: 20, warmupSteps: 5 }, (v, c) => {
    const shifts = v.history(METRIC.klUpdate);
    if (shifts.length < Math.min(KL_MIN_SAMPLES, c.window)) return null;
    const typical = median(shifts);
    return {
      holds: typical > c.threshold,
      recovered: typical < c.threshold / RECOVERY_BAND,
      value: typical,
      threshold: c.threshold,
      message: `Updates are too large: over the last ${shifts.length} steps the median KL between the policy before and after a step's update is ${fmt(typical)} nats per token, above ${fmt(c.threshold)}. Steps this large broke runs in bench/collapse tens of steps later, often suddenly (responses stop parsing); lower the learning rate.`,
    };
  }),
  // One answer whatever the state, while success has stopped rising. (A task whose right answer
  // is the same everywhere, like the bandit's arm, is answered with a template on the way up.)
  detector('template_collapse', METRIC.templateShare, { enabled: true, threshold: 0.9, severity: 'warning', window: 10, warmupSteps: 10 }, (v, c) => {
    const template = v.smoothed[METRIC.templateShare];
    const distinct = v.smoothed[METRIC.distinctRatio];
    if (template === undefined || distinct === undefined) return null;
    const stalled = v.sincePeak(METRIC.successRate) >= c.window;
    return {
      holds: template > c.threshold && distinct < 0.25 && !v.converged && stalled,
      recovered: template < c.threshold / RECOVERY_BAND || distinct > 0.25 * RECOVERY_BAND || v.converged,
      value: template,
      threshold: c.threshold,
      message: `One response is given for ${fmt(100 * template)}% of the initial states and groups hardly vary (distinct ratio ${fmt(distinct)}), while success (${fmt(v.success)}) has not converged: the agent answers with a template whatever the state.`,
    };
  }),
  // Responses stop parsing: the abrupt kind of collapse.
  detector('format_drop', METRIC.formatValid, { enabled: true, threshold: 0.75, severity: 'warning', window: 10, warmupSteps: 3 }, (v, c) => {
    const valid = v.smoothed[METRIC.formatValid];
    if (valid === undefined) return null;
    const peak = v.crediblePeak(METRIC.formatValid);
    const limit = c.threshold * peak;
    return {
      holds: peak >= MEANINGFUL_FORMAT_PEAK && valid < limit,
      // Re-armed halfway back to the peak: RECOVERY_BAND × limit would lie above the peak itself.
      recovered: valid > ((1 + c.threshold) / 2) * peak,
      value: valid,
      threshold: limit,
      message: `Only ${fmt(100 * valid)}% of responses still parse as actions, below ${fmt(c.threshold)}× the peak ${fmt(100 * peak)}%: updates are overshooting what the policy had learned — the abrupt kind of collapse; a lower learning rate usually helps.`,
    };
  }),
  // Success sliding from its peak, slowly or at once, by more than its own noise: the early half
  // of a fall that success_drop confirms.
  detector('success_slide', METRIC.successRate, { enabled: true, threshold: 0.7, severity: 'warning', window: 20, warmupSteps: 3 }, (v, c) => {
    const peak = v.crediblePeak(METRIC.successRate);
    const limit = c.threshold * peak;
    const noise = v.successNoise;
    if (noise === undefined) return null;
    const gap = peak - v.success;
    return {
      holds: peak >= MEANINGFUL_PEAK && v.success < limit && gap > FALL_NOISE_MARGIN * noise,
      // Re-armed halfway back to the peak, as format_drop: RECOVERY_BAND × limit lies above the peak.
      recovered: v.success > ((1 + c.threshold) / 2) * peak,
      value: v.success,
      threshold: limit,
      message: `Success slid to ${fmt(v.success)}, below ${fmt(c.threshold)}× its peak ${fmt(peak)} and ${fmt(gap / noise)} times its step-to-step noise: the policy is drifting away from what it had learned (success_drop confirms a collapse at 0.5×); consider rolling back to a checkpoint from before the slide, or a lower learning rate.`,
    };
  }),
  // The lagging signal: the collapse itself.
  detector('success_drop', METRIC.successRate, { enabled: true, threshold: 0.5, severity: 'warning', window: 10, warmupSteps: 3 }, (v, c) => {
    const peak = v.crediblePeak(METRIC.successRate);
    const limit = c.threshold * peak;
    const noise = v.successNoise;
    if (noise === undefined) return null;
    return {
      holds: peak >= MEANINGFUL_PEAK && v.success < limit && peak - v.success > FALL_NOISE_MARGIN * noise,
      recovered: v.success > RECOVERY_BAND * limit,
      value: v.success,
      threshold: limit,
      message: `Success fell to ${fmt(v.success)}, below ${fmt(c.threshold)}× its peak ${fmt(peak)}: the run is collapsing.`,
    };
  }),
] as const satisfies readonly Detector[];

/**
 * The standard deviation of an exponential moving average over `window` steps of a series whose
 * step-to-step noise is estimated from its recent values. Successive differences, not the values,
 * so that a steady drift is not mistaken for noise: for independent noise σ, a difference has
 * variance 2σ², and the EMA (α = 2/(window+1)) has variance σ²·α/(2−α). Undefined before four values.
 */
export function smoothedNoise(recent: readonly number[], window: number): number | undefined {
  const noise = stepNoise(recent);
  if (noise === undefined) return undefined;
  const alpha = 2 / (window + 1);
  return Math.max(noise * Math.sqrt(alpha / (2 - alpha)), MIN_NOISE);
}

/** One step's noise σ from successive differences (each has variance 2σ²); undefined before four values. */
export function stepNoise(recent: readonly number[]): number | undefined {
  if (recent.length < 4) return undefined;
  return unbiasedStd(recent.slice(1).map((x, i) => x - recent[i])) / Math.SQRT2;
}
/** A floor for smoothedNoise: a run stuck at one value has no noise, and any slide from it is real. */
const MIN_NOISE = 1e-3;

export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

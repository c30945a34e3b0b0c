import { Static, Type } from '@sinclair/typebox';
import { mean } from '../algorithms/stats';
import { DETECTOR_TABLE, DetectorConfig, PEAK_CREDIBILITY, Severity, StepView, median, smoothedNoise, stepNoise } from './detectors';
import { METRIC, type Metrics } from './step-metrics';

export type { DetectorConfig, Severity } from './detectors';
export type DetectorId = (typeof DETECTOR_TABLE)[number]['id'];
export const DETECTORS = DETECTOR_TABLE.map((d) => d.id) as DetectorId[];
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

/** Every detector's defaults (the table in detectors.ts; bench/collapse.md says how each was set). */
export const DEFAULT_DETECTORS = Object.fromEntries(DETECTOR_TABLE.map((d) => [d.id, d.defaults])) as Record<DetectorId, DetectorConfig>;

/** Success above this (smoothed) counts as converged: low variance and entropy are then expected. */
const CONVERGED_SUCCESS = 0.85;
/**
 * A converged run stays converged until success falls below this: a dip of a few points in a
 * solved task is success_drop's business and must not reopen every diversity alarm at once.
 */
const CONVERGED_RELEASE = 0.75;
/** How much a smoothed signal must exceed its peak to count as rising (sincePeak). */
const PEAK_MARGIN = 1e-3;

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
  /** The step each smoothed signal last set a new peak. */
  peakStep?: Record<string, number>;
  /** The variance of each smoothed signal in units of one step's noise variance (1 at its first value). */
  emaVariance?: Record<string, number>;
  /** The credible peak of success and of the valid-format rate (StepView.crediblePeak). */
  credible?: Record<string, number>;
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

/**
 * Every metric the monitor reads. A backtest over a series that keeps only these says exactly
 * what one over the full metrics says, so benches store these to replay later detectors.
 */
export const MONITOR_INPUTS = [
  METRIC.successRate,
  METRIC.rewardStdInGroup,
  METRIC.entropyMean,
  METRIC.gradNormActor,
  METRIC.klUpdate,
  METRIC.templateShare,
  METRIC.distinctRatio,
  METRIC.formatValid,
] as const;

const ema = (previous: number | undefined, value: number, window: number) => (previous === undefined ? value : previous + (2 / (window + 1)) * (value - previous));

/**
 * The variance of an EMA (α = 2/(window+1)) after one more value, in units of the variance of one
 * step's independent noise: an EMA starts at its first value (variance 1), then each value takes
 * it to (1−α)²·v + α², down to the settled α/(2−α) = 1/window.
 */
function nextEmaVariance(previous: number, window: number): number {
  const alpha = 2 / (window + 1);
  return (1 - alpha) ** 2 * previous + alpha ** 2;
}

/** Signals whose falls are measured from a credible peak (success_slide, success_drop, format_drop). */
const CREDIBLE_PEAKS = [METRIC.successRate, METRIC.formatValid] as const;

/**
 * Watches the step metrics of one run and turns them into collapse warnings (docs/training.md,
 * "Signals"): it keeps the smoothed signals, peaks and histories the detectors read, and latches
 * each detector when it fires. A latched detector warns once and re-arms only after its signal has
 * been back beyond the threshold (by RECOVERY_BAND) for a whole window — a Schmitt trigger, so a
 * noisy signal hovering at the threshold is one warning, not ten.
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
      delete s.history[METRIC.klUpdate];
      s.active.kl_overshoot = false;
      delete s.clearFor?.kl_overshoot;
    }
    s.learningRate = learningRate;
  }

  /**
   * Tells the monitor that the training episodes come from another task from the next step on (a
   * curriculum's end). Success, reward spread, entropy and format measured on the easier task say
   * nothing of the new one, whose success starts lower by design: every detector starts afresh,
   * keeping only the learning rate and the last severe warning, which tags checkpoints.
   */
  newTask(): void {
    const { lastSevere, learningRate } = this.state;
    this.state = { ema: {}, peak: {}, entropyReference: [], history: {}, active: {}, lastSevere, ...(learningRate === undefined ? {} : { learningRate }) };
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
    const view = this.view(step, metrics);
    const warnings: CollapseWarning[] = [];
    for (const detector of DETECTOR_TABLE) {
      const config = this.detectors[detector.id];
      if (!config.enabled || step < config.warmupSteps) continue;
      const reading = detector.read(view, config);
      if (!reading) continue;
      const warning = this.latch(step, detector.id, config, reading.holds, reading.recovered);
      if (warning) warnings.push({ step, detector: detector.id, signal: detector.signal, value: round(reading.value), threshold: round(reading.threshold), severity: config.severity, message: reading.message });
    }
    // The gradient history excludes this step's norm, so a spike is measured against what came before.
    this.remember(METRIC.gradNormActor, metrics, this.detectors.grad_norm_spike.window);
    return warnings;
  }

  /** Updates the smoothed signals and histories with this step's metrics and returns what the detectors read. */
  private view(step: number, metrics: Metrics): StepView {
    const s = this.state;
    const d = this.detectors;
    const smoothed: Record<string, number | undefined> = {};
    const smooth = (name: string, window: number) => {
      const value = metrics[name];
      if (value !== undefined && Number.isFinite(value)) {
        const variance = (s.emaVariance ??= {});
        // A state kept before variances were tracked: its EMA has settled, and its peak is its credible peak.
        if (s.ema[name] !== undefined && variance[name] === undefined) {
          variance[name] = 1 / window;
          if (s.peak[name] !== undefined && (CREDIBLE_PEAKS as readonly string[]).includes(name)) (s.credible ??= {})[name] = s.peak[name];
        }
        variance[name] = s.ema[name] === undefined ? 1 : nextEmaVariance(variance[name], window);
        s.ema[name] = ema(s.ema[name], value, window);
        const peakStep = (s.peakStep ??= {});
        // A new peak must beat the old one by PEAK_MARGIN: a flat plateau's rounding is no rise.
        if (s.peak[name] === undefined || s.ema[name] > s.peak[name] + PEAK_MARGIN || peakStep[name] === undefined) peakStep[name] = step;
        s.peak[name] = Math.max(s.peak[name] ?? -Infinity, s.ema[name]);
      }
      smoothed[name] = s.ema[name];
    };
    smooth(METRIC.successRate, d.success_drop.window);
    smooth(METRIC.rewardStdInGroup, d.reward_std_drop.window);
    smooth(METRIC.entropyMean, d.entropy_collapse.window);
    smooth(METRIC.templateShare, d.template_collapse.window);
    smooth(METRIC.distinctRatio, d.template_collapse.window);
    smooth(METRIC.formatValid, d.format_drop.window);
    const success = smoothed[METRIC.successRate] ?? 0;
    const converged = (s.converged = success >= (s.converged ? CONVERGED_RELEASE : CONVERGED_SUCCESS));
    if (s.entropyReference.length < 5 && metrics[METRIC.entropyMean] !== undefined) s.entropyReference.push(metrics[METRIC.entropyMean]);
    this.remember(METRIC.entropyMean, metrics, d.entropy_erratic.window);
    if (step >= d.kl_overshoot.warmupSteps) this.remember(METRIC.klUpdate, metrics, d.kl_overshoot.window);
    // The last `window` steps of success give success_slide and success_drop the differences they measure noise by.
    this.remember(METRIC.successRate, metrics, d.success_slide.window + 1);
    this.remember(METRIC.formatValid, metrics, d.format_drop.window + 1);
    this.raiseCrediblePeak(METRIC.successRate, metrics, d.success_drop.window);
    this.raiseCrediblePeak(METRIC.formatValid, metrics, d.format_drop.window);
    const gradHistory = s.history[METRIC.gradNormActor] ?? [];
    return {
      step,
      metrics,
      success,
      successNoise: smoothedNoise(s.history[METRIC.successRate] ?? [], d.success_drop.window),
      converged,
      smoothed,
      peak: (name) => s.peak[name] ?? 0,
      crediblePeak: (name) => s.credible?.[name] ?? s.peak[name] ?? 0,
      sincePeak: (name) => step - (s.peakStep?.[name] ?? step),
      entropyReference: s.entropyReference.length >= 5 ? mean(s.entropyReference) : undefined,
      history: (name) => s.history[name] ?? [],
      // The median alone is a poor scale when most steps carry no learning signal (all groups
      // identical → gradient ≈ 0): then every ordinary step would look like a spike. The rolling
      // mean is lifted by those ordinary steps, so the larger of the two is the reference.
      gradReference: gradHistory.length >= 5 ? Math.max(median(gradHistory), mean(gradHistory)) : undefined,
    };
  }

  /**
   * The credible peak of a signal: the highest its smoothed value has been less PEAK_CREDIBILITY
   * deviations of that smoothed value's own noise (one step's noise, from the recent differences,
   * times the EMA's spread then). The first time four values give a noise estimate, the smoothed
   * values of those four steps are rebuilt from them and each is judged with that estimate.
   */
  private raiseCrediblePeak(name: string, metrics: Metrics, window: number): void {
    const s = this.state;
    const recent = s.history[name] ?? [];
    const noise = stepNoise(recent);
    if (metrics[name] === undefined || noise === undefined) return;
    const credible = (s.credible ??= {});
    const lower = (level: number, variance: number) => level - PEAK_CREDIBILITY * noise * Math.sqrt(variance);
    if (credible[name] === undefined) {
      let level: number | undefined;
      let variance = 1;
      for (const value of recent) {
        variance = level === undefined ? 1 : nextEmaVariance(variance, window);
        level = ema(level, value, window);
        credible[name] = Math.max(credible[name] ?? -Infinity, lower(level, variance));
      }
    } else {
      credible[name] = Math.max(credible[name], lower(s.ema[name], s.emaVariance![name]));
    }
  }

  private remember(name: string, metrics: Metrics, window: number): void {
    const value = metrics[name];
    if (value === undefined || !Number.isFinite(value)) return;
    const list = (this.state.history[name] ??= []);
    list.push(value);
    if (list.length > window) list.shift();
  }

  /** Latches a detector; true when it starts to hold now (a new warning). */
  private latch(step: number, id: DetectorId, config: DetectorConfig, holds: boolean, recovered: boolean): boolean {
    const s = this.state;
    const clearFor = (s.clearFor ??= {});
    const fires = holds && !s.active[id];
    if (fires && config.severity !== 'info' && (s.lastSevere?.severity !== 'critical' || config.severity === 'critical')) s.lastSevere = { step, severity: config.severity };
    if (holds || (s.active[id] && !recovered)) {
      s.active[id] = true;
      clearFor[id] = 0;
    } else if (s.active[id]) {
      clearFor[id] = (clearFor[id] ?? 0) + 1;
      if (clearFor[id]! >= config.window) s.active[id] = false;
    }
    return fires;
  }
}

/** Replays stored step metrics through a monitor: what these rules would have said (backtests); `taskChanges`: the steps a curriculum ended before (taskChangeSteps). */
export function backtest(series: readonly { step: number; metrics: Metrics }[], rules: readonly CollapseRule[] = [], taskChanges: readonly number[] = []): CollapseWarning[] {
  const monitor = new CollapseMonitor(rules);
  return [...series]
    .sort((a, b) => a.step - b.step)
    .flatMap((row) => {
      if (taskChanges.includes(row.step)) monitor.newTask();
      return monitor.observe(row.step, row.metrics);
    });
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

const round = (x: number) => Math.round(x * 1e4) / 1e4;

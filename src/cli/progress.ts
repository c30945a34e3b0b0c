import { evalSuccessOf, type Metrics } from '../training/signals/step-metrics';
import { WARMUP_REPORT_EVERY } from '../training/warmup-report';

/** The signals a researcher watches, as `label: metric name`, most important first. */
const SHOWN: [string, string][] = [
  ['reward', 'reward/mean'],
  ['success', 'success/rate'],
  ['std', 'reward/std_in_group'],
  ['H', 'entropy/mean'],
  ['|g|', 'grad_norm/actor'],
  ['fmt', 'format/valid_rate'],
];
/** Evaluation success, whatever the evaluation protocol names it. */
const EVAL_SUCCESS = /^eval\/.*success/;
const BAR_MAX = 24;
const BAR_MIN = 8;
const DEFAULT_COLUMNS = 80;

export interface ProgressState {
  step: number;
  total: number;
  /** [label, value] pairs, in the order they should be kept when space runs out. */
  signals: [string, number][];
  elapsedS: number;
  etaS: number | null;
}

/**
 * One progress line that fits in `columns` (it is at most columns − 1 characters, so a terminal
 * never wraps it and the next redraw replaces it cleanly). The bar shrinks first, then the
 * signals are dropped from the least important, then the timing; step/total always stays.
 */
export function renderProgress(state: ProgressState, columns: number): string {
  const room = Math.max(1, columns - 1);
  const counter = `${String(state.step).padStart(String(state.total).length)}/${state.total}`;
  const timing = `${formatDuration(state.elapsedS)}${state.etaS !== null && Number.isFinite(state.etaS) ? ` eta ${formatDuration(state.etaS)}` : ''}`;
  const signals = state.signals.map(([label, value]) => `${label} ${value.toFixed(3)}`);
  const line = (barWidth: number, shown: string[], withTiming: boolean) =>
    [barWidth > 0 ? `${bar(state.step / state.total, barWidth)} ${counter}` : counter, ...shown, ...(withTiming ? [timing] : [])].join('  ');
  for (let kept = signals.length; kept >= 0; kept--) {
    for (let width = BAR_MAX; width >= BAR_MIN; width -= 4) {
      const candidate = line(width, signals.slice(0, kept), true);
      if (candidate.length <= room) return candidate;
    }
  }
  const bare = line(0, [], true);
  return (bare.length <= room ? bare : counter).slice(0, room);
}

function bar(fraction: number, width: number): string {
  const filled = Math.max(0, Math.min(width, Math.round(width * fraction)));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

/** The terminal's width (process.stdout.columns, or the stream's own), 80 when unknown. */
export function terminalColumns(stream?: NodeJS.WriteStream): number {
  return stream?.columns || process.stdout.columns || DEFAULT_COLUMNS;
}

/** The shown signals of a step's metrics, with the latest evaluation success carried between evaluations. */
export function progressSignals(metrics: Metrics, lastEval: number | undefined): [string, number][] {
  const signals = SHOWN.filter(([, name]) => Number.isFinite(metrics[name])).map(([label, name]) => [label, metrics[name]] as [string, number]);
  return lastEval === undefined ? signals : [...signals.slice(0, 2), ['eval', lastEval], ...signals.slice(2)];
}

/**
 * The evaluation success of these metrics, if they have one: the protocol series the training
 * library names (sampled, then greedy), else any other `eval/…success…` series.
 */
export function evalSuccess(metrics: Metrics): number | undefined {
  const named = evalSuccessOf(metrics);
  if (named !== undefined) return named;
  const name = Object.keys(metrics).filter((n) => EVAL_SUCCESS.test(n) && Number.isFinite(metrics[n])).sort()[0];
  return name === undefined ? undefined : metrics[name];
}

/**
 * A one-line progress bar with the key signals, redrawn in place on a terminal and printed as
 * plain lines (every `everyLines` steps) when the stream is a file or a pipe. The ETA is measured
 * over the steps this bar has seen, so a bar attached to a run already under way is right too.
 */
export class ProgressBar {
  private readonly started = Date.now();
  private firstStep: number | undefined;
  private lastEval: number | undefined;
  /** When this bar saw the warm-up's first report, and how far it was then (its ETA is measured from there). */
  private warmupSeen: { at: number; done: number } | undefined;

  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly everyLines = 10,
  ) {}

  /** Notes a step's evaluation without drawing (steps from before the bar was attached). */
  remember(metrics: Metrics): void {
    this.lastEval = evalSuccess(metrics) ?? this.lastEval;
  }

  update(step: number, metrics: Metrics): void {
    const evaluation = evalSuccess(metrics);
    if (evaluation !== undefined) this.lastEval = evaluation;
    this.firstStep ??= step;
    const elapsedS = (Date.now() - this.started) / 1000;
    const done = step - this.firstStep;
    const line = renderProgress(
      { step, total: this.total, signals: progressSignals(metrics, this.lastEval), elapsedS, etaS: done > 0 ? (elapsedS / done) * (this.total - step) : null },
      terminalColumns(this.stream),
    );
    if (this.stream.isTTY) this.stream.write(`\r\x1b[2K${line}`);
    else if (step % this.everyLines === 0 || step === this.total || evaluation !== undefined) this.stream.write(`${line}\n`);
  }

  /**
   * Draws the supervised warm-up, the phase before RL step 0: its steps done, its loss and the
   * time left at its pace since the first report this bar saw (`at`: when the report was made).
   * Into a file or a pipe, every fifth report and the last are printed.
   */
  warmup(report: { kind: string; done: number; steps: number; loss: number }, at = Date.now()): void {
    const now = at;
    this.warmupSeen ??= { at: now, done: report.done };
    const elapsedS = (now - this.warmupSeen.at) / 1000;
    const done = report.done - this.warmupSeen.done;
    const label = `warm-up ${report.kind} `;
    const line = renderProgress(
      { step: report.done, total: report.steps, signals: [['loss', report.loss]], elapsedS, etaS: done > 0 ? (elapsedS / done) * (report.steps - report.done) : null },
      Math.max(20, terminalColumns(this.stream) - label.length),
    );
    if (this.stream.isTTY) this.stream.write(`\r\x1b[2K${label}${line}`);
    else if (report.done % (5 * WARMUP_REPORT_EVERY) === 0 || report.done === report.steps) this.stream.write(`${label}${line}\n`);
  }

  message(text: string): void {
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

import { evalSuccessOf, type Metrics } from '../training/signals/step-metrics';

/** The signals a researcher watches, as `label: metric name`. */
const SHOWN: [string, string][] = [
  ['reward', 'reward/mean'],
  ['success', 'success/rate'],
  ['std', 'reward/std_in_group'],
  ['H', 'entropy/mean'],
  ['|g|', 'grad_norm/actor'],
  ['fmt', 'format/valid_rate'],
];

/**
 * A one-line progress bar with the key signals, redrawn in place on a terminal and printed as
 * plain lines (every `everyLines` steps) when stderr is a file or a pipe.
 */
export class ProgressBar {
  private readonly started = Date.now();
  private lastEval: number | undefined;

  constructor(
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly everyLines = 10,
  ) {}

  update(step: number, metrics: Metrics): void {
    const evalSuccess = evalSuccessOf(metrics);
    if (evalSuccess !== undefined) this.lastEval = evalSuccess;
    const line = this.render(step, metrics);
    if (this.stream.isTTY) this.stream.write(`\r\x1b[2K${line}`);
    else if (step % this.everyLines === 0 || step === this.total || evalSuccess !== undefined) this.stream.write(`${line}\n`);
  }

  message(text: string): void {
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }

  private render(step: number, metrics: Metrics): string {
    const width = 24;
    const filled = Math.round((width * step) / this.total);
    const bar = '#'.repeat(filled) + '.'.repeat(width - filled);
    const signals = SHOWN.filter(([, name]) => metrics[name] !== undefined).map(([label, name]) => `${label} ${metrics[name].toFixed(3)}`);
    if (this.lastEval !== undefined) signals.push(`eval ${this.lastEval.toFixed(3)}`);
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = step > 0 ? (elapsed / step) * (this.total - step) : NaN;
    return `[${bar}] ${String(step).padStart(String(this.total).length)}/${this.total}  ${signals.join('  ')}  ${formatDuration(elapsed)}${Number.isFinite(eta) ? ` eta ${formatDuration(eta)}` : ''}`;
  }
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

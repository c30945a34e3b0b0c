/**
 * The warm-up's progress reports as log lines: written by the trainer (src/training/warmup-phase.ts),
 * read back by the API, the worker and the CLI. A module of its own so that readers do not load
 * the trainer (and tensorflow.js) to parse a line.
 */

/** Supervised steps between two progress reports of the warm-up (a log line each; see warmupReport). */
export const WARMUP_REPORT_EVERY = 10;

/** A warm-up progress report: `done` of `steps` supervised steps, and the mean loss over those since the last report. */
export interface WarmupReport {
  kind: string;
  done: number;
  steps: number;
  loss: number;
}

/** The log line of a report (the worker stores it as a job event; services and clients read it back with parseWarmupReport). */
export function warmupReport(report: WarmupReport): string {
  return `warm-up ${report.kind} ${report.done}/${report.steps} loss ${report.loss.toFixed(4)}`;
}

const REPORT_LINE = /^warm-up (\w+) (\d+)\/(\d+) loss (-?[\d.]+(?:e-?\d+)?)/;

/** The report in a log line, or null for any other line. */
export function parseWarmupReport(message: string): WarmupReport | null {
  const match = REPORT_LINE.exec(message);
  return match ? { kind: match[1], done: Number(match[2]), steps: Number(match[3]), loss: Number(match[4]) } : null;
}

import type { JobView } from '../contracts/jobs.dto';
import type { ProgressReadings } from '../repositories/progress.repository';
import { parseWarmupReport } from '../training/warmup-report';


interface JobFacts {
  status: string;
  currentStep: number;
  totalSteps: number;
  /** Null until step 0 (the warm-up and its evaluation) is stored. */
  latestMetrics: unknown;
  spec: unknown;
}

/**
 * Where a job stands in its warm-up, and when it should finish:
 * * warmup: null without one; `completed` = steps once step 0 is stored, else the trainer's last
 *   report in this attempt (every WARMUP_REPORT_EVERY steps); its `etaSeconds` = elapsed / completed × remaining.
 * * eta (running jobs past their warm-up): the mean time per step over the newest steps stored
 *   in this attempt (so a resume's gap does not count) × the steps left; null until two steps
 *   have been timed.
 */
export function jobProgress(job: JobFacts, readings: ProgressReadings | undefined, now: Date): Pick<JobView, 'warmup' | 'eta'> {
  return { warmup: warmupProgress(job, readings, now), eta: job.status === 'running' ? stepsEta(job, readings, now) : null };
}

function warmupProgress(job: JobFacts, readings: ProgressReadings | undefined, now: Date): JobView['warmup'] {
  const warmup = (job.spec as { training?: { warmup?: { kind?: string; steps?: number } } }).training?.warmup;
  if (!warmup?.kind || warmup.kind === 'none' || !warmup.steps) return null;
  const base = { kind: warmup.kind, steps: warmup.steps };
  if (job.latestMetrics !== null || job.currentStep > 0) return { ...base, completed: warmup.steps, etaSeconds: null };
  const started = readings?.processStartedAt;
  const report = readings?.warmupReport;
  const parsed = job.status === 'running' && started && report && report.at >= started ? parseWarmupReport(report.message) : null;
  if (!parsed || !started) return { ...base, completed: 0, etaSeconds: null };
  const completed = Math.min(parsed.done, warmup.steps);
  const perStep = (report!.at.getTime() - started.getTime()) / 1000 / completed;
  const elapsedSinceReport = (now.getTime() - report!.at.getTime()) / 1000;
  return { ...base, completed, etaSeconds: Math.max(0, perStep * (warmup.steps - completed) - elapsedSinceReport) };
}

function stepsEta(job: JobFacts, readings: ProgressReadings | undefined, now: Date): JobView['eta'] {
  const started = readings?.processStartedAt;
  const steps = (readings?.recentSteps ?? []).filter((s) => !started || s.at >= started);
  if (steps.length < 2) return null;
  const newest = steps[0];
  const oldest = steps[steps.length - 1];
  const secondsPerStep = (newest.at.getTime() - oldest.at.getTime()) / 1000 / (newest.step - oldest.step);
  const seconds = Math.max(0, secondsPerStep * (job.totalSteps - job.currentStep) - (now.getTime() - newest.at.getTime()) / 1000);
  return { seconds, finishAt: new Date(now.getTime() + seconds * 1000).toISOString(), secondsPerStep };
}

import type { WarmupView } from '../contracts/jobs.dto';
import { METRIC } from '../training/signals/step-metrics';
import { parseWarmupReport } from '../training/warmup-report';

interface WarmupJob {
  status: string;
  spec: unknown;
  currentStep: number;
}

/**
 * The warm-up of a job as a phase of its own (GET /v1/jobs/{id}/warmup): its state, progress, ETA
 * and loss curve, from the progress lines the trainer logged (every WARMUP_REPORT_EVERY steps)
 * and step 0's metrics. Only the newest training process's lines count, so a warm-up restarted
 * after a crash draws one curve; its ETA is its pace so far in that process.
 */
export function warmupView(job: WarmupJob, history: { lines: { message: string; at: Date }[]; step0: Record<string, number> | null }, now: Date): WarmupView {
  const warmup = (job.spec as { training?: { warmup?: { kind?: string; steps?: number } } }).training?.warmup ?? {};
  const kind = warmup.kind ?? 'none';
  const steps = kind === 'none' ? 0 : (warmup.steps ?? 0);
  const base = { kind, steps, reused: null, completed: 0, etaSeconds: null, seconds: null, loss: [], finalLoss: null };
  if (steps === 0) return { ...base, state: 'none' };
  // The lines after the newest process start that logged warm-up lines: a resume past step 0 logs none.
  let from = 0;
  let startedAt: Date | null = null;
  history.lines.forEach((line, i) => {
    if (!line.message.startsWith('training process started')) return;
    if (history.lines.slice(i + 1).some((later) => later.message.startsWith('warm-up '))) {
      from = i + 1;
      startedAt = line.at;
    }
  });
  const lines = history.lines.slice(from);
  const reports = lines.flatMap((line) => {
    const report = parseWarmupReport(line.message);
    return report ? [{ ...report, at: line.at }] : [];
  });
  const reused = lines.some((line) => /^warm-up \w+: reused a stored one/.test(line.message));
  const loss = reports.map((r) => ({ step: r.done, loss: r.loss }));
  const step0 = history.step0;
  if (step0 !== null || job.currentStep > 0) {
    const ms = step0?.['warmup/ms'];
    return { ...base, state: 'done', reused: step0 && 'warmup/reused' in step0 ? step0['warmup/reused'] === 1 : reused || null, completed: steps, loss, seconds: ms === undefined ? null : ms / 1000, finalLoss: step0?.[METRIC.warmupLoss] ?? null };
  }
  const last = reports[reports.length - 1];
  if (job.status !== 'running' || (!last && !reused)) return { ...base, state: 'pending', loss };
  if (!last) return { ...base, state: 'running', reused, loss };
  const completed = Math.min(last.done, steps);
  const elapsed = startedAt ? (last.at.getTime() - (startedAt as Date).getTime()) / 1000 : null;
  const etaSeconds = elapsed === null ? null : Math.max(0, (elapsed / completed) * (steps - completed) - (now.getTime() - last.at.getTime()) / 1000);
  return { ...base, state: 'running', reused: false, completed, etaSeconds, loss };
}

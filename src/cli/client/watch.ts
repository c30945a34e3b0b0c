import { WarmupReport, parseWarmupReport } from '../../training/warmup-report';
import { ProgressBar } from '../progress';
import type { ApiClient, JobEvent } from './api-client';
import { ENDED, type Io, type JobView } from './jobs';

interface Warning {
  step: number;
  severity: string;
  detector: string;
  message: string;
}

/**
 * Follows a job live: a progress bar with its signals (redrawn in place, fitting the terminal),
 * warnings and state changes printed above it as they happen. Events from before the watch
 * began are summarised, not replayed step by step. Resolves with the job's final status.
 */
export async function watch(client: ApiClient, io: Io, id: string, signal: AbortSignal, stream: NodeJS.WriteStream = process.stdout): Promise<string> {
  const job = await client.get<JobView>(`/v1/jobs/${id}`);
  const bar = new ProgressBar(job.totalSteps, stream);
  io.out(`watching ${job.name} (${job.id}): ${job.status}, step ${job.currentStep}/${job.totalSteps}`);
  // A job that has already ended is replayed: its stream sends the whole history and then closes,
  // so its warnings show as "(earlier)" and the last line says how it ended.
  let status = job.status;
  let earlier = 0;
  const startedAt = Date.now();
  // Every event of a job that had ended is from before the watch, however recent its last ones are.
  const ended = ENDED.includes(job.status);
  const line = (text: string) => bar.message(text);
  if (job.status === 'running' && job.currentStep === 0 && job.warmup && job.warmup.completed < job.warmup.steps) {
    line(`in the warm-up (${job.warmup.kind}, ${job.warmup.steps} supervised steps) before RL step 1`);
  }
  for await (const event of client.follow(id, signal, (error) => line(`connection lost (${error.message}); reconnecting…`))) {
    const past = ended || new Date(event.createdAt).getTime() < startedAt - 1000;
    if (event.type === 'step') {
      const { step, metrics } = event.data as { step: number; metrics: Record<string, number> };
      if (past && step < job.currentStep) bar.remember(metrics);
      else bar.update(step, metrics);
    } else if (event.type === 'log') {
      const report = (event.data as { warmup?: WarmupReport } | null)?.warmup ?? parseWarmupReport(event.message);
      // Reports from before the watch began are drawn too while the warm-up still runs: their times give its pace.
      if (report && (!past || (status === 'running' && job.currentStep === 0))) bar.warmup(report, new Date(event.createdAt).getTime());
      else if (!past && event.message.startsWith('warm-up')) line(`• ${event.message}`);
    } else if (event.type === 'warning') {
      const w = event.data as Warning;
      line(`${past ? '(earlier) ' : ''}⚠ step ${w.step} ${w.severity} ${w.detector}: ${w.message}`);
    } else if (event.type === 'state' || event.type === 'audit') {
      status = ((event.data as { status?: string } | null)?.status ?? status) as string;
      if (past) earlier++;
      else line(describe(event));
    }
  }
  bar.finish();
  if (signal.aborted) return status;
  const final = await client.get<JobView>(`/v1/jobs/${id}`);
  if (earlier > 0) io.err(`(${earlier} earlier state changes: starlab show ${id})`);
  io.out(`job ${final.status} at step ${final.currentStep}/${final.totalSteps}${final.error ? `: ${final.error}` : ''}`);
  return final.status;
}

function describe(event: JobEvent): string {
  return `${event.type === 'audit' ? '•' : '→'} ${event.message}`;
}

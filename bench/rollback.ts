/**
 * bench/rollback: does acting on a collapse warning save the run?
 *
 * Trains collapsing runs of bench/collapse through the real service (database, API, worker) twice:
 * with `collapse.action: "warn"` and with `"rollback"` (back to the last checkpoint tagged healthy
 * before the warning, learning rate halved, at most 3 times). Prints for each: the collapse step
 * of the surviving series (bench/collapse's definition), the rollbacks taken, mean training
 * success over the last 10 steps and evaluation success at the end.
 *
 *   npm run bench:rollback -- [--runs bandit-s-lr5e-3,bandit-s-lr5e-3-seed2,bandit-grpo-lr1e-3]
 */
import { parseArgs } from 'node:util';
import { collapseStep } from '../src/training/signals/collapse';
import { mean } from '../src/training/algorithms/stats';
import { SUITE } from './collapse';
import { BenchService, startService } from './service';

type Row = { step: number; metrics: Record<string, number> };

type JobEvent = { id: number; message: string; data: { action?: string } | null };

async function events(service: BenchService, id: string): Promise<JobEvent[]> {
  const all: JobEvent[] = [];
  for (let more = true; more; ) {
    const page = await service.api<{ data: JobEvent[]; has_more: boolean }>(`/v1/jobs/${id}/events?limit=1000${all.length ? `&after=${all[all.length - 1].id}` : ''}`);
    all.push(...page.data);
    more = page.has_more;
  }
  return all;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: 'bandit-s-lr5e-3,bandit-s-lr5e-3-seed2,bandit-grpo-lr1e-3' } } });
  const names = values.runs!.split(',');
  const unknown = names.filter((name) => !SUITE.some((r) => r.name === name));
  if (unknown.length > 0) throw new Error(`not in the bench/collapse suite: ${unknown.join(', ')}`);
  const runs = names.map((name) => SUITE.find((r) => r.name === name)!);
  const service = await startService({ STARLAB_WORKER_SLOTS: '2' });
  try {
    const submitted = [];
    for (const run of runs) {
      for (const action of ['warn', 'rollback'] as const) {
        const spec = structuredClone(run.spec) as { training: Record<string, unknown> };
        // Checkpoints every 2 steps give rollback somewhere healthy to return to; one evaluation at the end.
        Object.assign(spec.training, { checkpointEvery: 2, evalEvery: spec.training.steps, evalEpisodes: 64 });
        const body = { ...spec, name: `${run.name} ${action}`, collapse: { action, rollback: { learningRateScale: 0.5, maxRollbacks: 3 } } };
        const job = await service.api<{ id: string; title?: string; errors?: unknown }>('/v1/jobs', { method: 'POST', body: JSON.stringify(body) });
        if (!job.id) throw new Error(`submission refused: ${JSON.stringify(job)}`);
        submitted.push({ run, action, id: job.id });
      }
    }
    console.log('run                            action     status     collapse  rollbacks  success (last 10 steps)  eval success');
    for (const { run, action, id } of submitted) {
      const status = await service.waitForJob(id);
      const { data } = await service.api<{ data: Row[] }>(`/v1/jobs/${id}/metrics`);
      const series = data.filter((r) => r.step > 0);
      const rollbacks = (await events(service, id)).filter((e) => e.data?.action === 'rollback');
      const last = series.slice(-10).map((r) => r.metrics['success/rate']).filter((x) => x !== undefined);
      const evalSuccess = [...series].reverse().find((r) => r.metrics['eval/success'] !== undefined)?.metrics['eval/success'];
      console.log(`${run.name.padEnd(30)} ${action.padEnd(10)} ${status.padEnd(10)} ${String(collapseStep(series) ?? '–').padStart(8)}  ${String(rollbacks.length).padStart(9)}  ${mean(last).toFixed(3).padStart(23)}  ${evalSuccess === undefined ? '–' : evalSuccess.toFixed(3)}`);
      for (const event of rollbacks) console.log(`    ${event.message}`);
    }
  } finally {
    await service.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

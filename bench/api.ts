/**
 * bench/api: read throughput and latency of the API under load on loopback (autocannon), and
 * the worker's cost of persisting one training step.
 *
 *   npm run bench:api -- [--connections 16] [--seconds 8] [--runs 3] [--steps 200]
 *
 * Starts its own database, an API process and a worker process, trains a 200-step job, then
 * loads GET /v1/jobs/{id} of that finished job and of a queued one (a GPU job: no GPU worker
 * runs, so it waits with a queue position) and GET /v1/jobs/{id}/metrics (200 rows), with two
 * references in the same run: GET /health (the service's own ceiling: Nest and Express, no auth,
 * no database) and a bare `node:http` server in its own process (the machine's ceiling).
 */
import autocannon = require('autocannon');
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { PrismaService } from '../src/repositories/prisma.service';
import { JobLifecycleRepository } from '../src/repositories/job-lifecycle.repository';
import type { TrajectoryRecord } from '../src/training/records';
import { BENCH_KEY, startService } from './service';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function load(url: string, connections: number, seconds: number, auth: boolean) {
  const result = await autocannon({ url, connections, duration: seconds, headers: auth ? { Authorization: `Bearer ${BENCH_KEY}` } : {} });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** A bare node:http server in its own process: what loopback and this machine serve with no framework. */
async function bareServer(): Promise<{ url: string; stop: () => void }> {
  const port = 3990 + Math.floor(Math.random() * 9);
  const child = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { s.setHeader('content-type', 'application/json'); s.end('{"status":"ok"}'); }).listen(${port}, '127.0.0.1')`], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 50 && !(await fetch(url).then((r) => r.ok).catch(() => false)); i++) await new Promise((r) => setTimeout(r, 100));
  return { url, stop: () => child.kill('SIGKILL') };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { connections: { type: 'string', default: '16' }, seconds: { type: 'string', default: '8' }, runs: { type: 'string', default: '3' }, steps: { type: 'string', default: '200' } } });
  // The limiter stays on (its Redis round trip is part of every request) but high enough that
  // the load generator measures serving, not 429s.
  const service = await startService({ STARLAB_RATE_LIMIT_PER_MINUTE: '1000000' });
  const { base, api } = service;
  try {
    const spec = {
      environment: { id: 'bandit' },
      algorithm: { id: 'starpo-s' },
      model: { config: { dModel: 32, contextLength: 48 } },
      rollout: { groups: 8, groupSize: 8, maxTokensPerTurn: 16 },
      training: { steps: Number(values.steps), evalEvery: 50, evalEpisodes: 64, checkpointEvery: 50, warmup: { steps: 60 } },
    };
    const job = await api<{ id: string }>('/v1/jobs', { method: 'POST', body: JSON.stringify(spec) });
    const queued = await api<{ id: string; status: string }>('/v1/jobs', { method: 'POST', body: JSON.stringify({ ...spec, name: 'waits-for-a-gpu', device: 'gpu' }) });
    const trainStarted = Date.now();
    const status = await service.waitForJob(job.id);
    const metrics = await api<{ data: { step: number; metrics: Record<string, number> }[] }>(`/v1/jobs/${job.id}/metrics`);
    const stepMs = median(metrics.data.filter((r) => r.step > 0).map((r) => r.metrics['perf/step_ms']));
    console.log(`trained a ${metrics.data.length - 1}-step job (${status}) in ${((Date.now() - trainStarted) / 1000).toFixed(0)} s; median training step ${stepMs.toFixed(0)} ms\n`);

    const connections = Number(values.connections);
    const seconds = Number(values.seconds);
    console.log(`autocannon, ${connections} connections, ${seconds} s per run, median of ${values.runs} runs`);
    console.log('endpoint                           req/s     p50 ms   p99 ms   errors   vs /health');
    const bare = await bareServer();
    const targets: [string, string, boolean][] = [
      ['bare node:http (reference)', bare.url, false],
      ['GET /health (reference)', `${base}/health`, false],
      ['GET /v1/jobs/{id} (finished)', `${base}/v1/jobs/${job.id}`, true],
      ['GET /v1/jobs/{id} (queued)', `${base}/v1/jobs/${queued.id}`, true],
      [`GET /v1/jobs/{id}/metrics (${values.steps} steps)`, `${base}/v1/jobs/${job.id}/metrics`, true],
    ];
    let reference = 0;
    try {
      for (const [label, url, auth] of targets) {
        const runs = [];
        for (let i = 0; i < Number(values.runs); i++) runs.push(await load(url, connections, seconds, auth));
        const rps = median(runs.map((r) => r.rps));
        if (label.startsWith('GET /health')) reference = rps;
        console.log(
          `${label.padEnd(36)} ${rps.toFixed(0).padStart(6)} ${median(runs.map((r) => r.p50)).toFixed(0).padStart(9)} ${median(runs.map((r) => r.p99)).toFixed(0).padStart(8)} ${String(runs.reduce((n, r) => n + r.errors, 0)).padStart(8)}   ${reference ? `${(rps / reference).toFixed(2)}×` : ''}`,
        );
      }
    } finally {
      bare.stop();
    }
    const stillQueued = await api<{ status: string; queue: unknown }>(`/v1/jobs/${queued.id}`);
    console.log(`(the queued job was ${stillQueued.status} throughout: ${JSON.stringify(stillQueued.queue)})`);

    // What the worker pays per step: the same transaction it runs (metrics row, 64 trajectories,
    // 8 of them with text, job progress, step event), timed on this database.
    const prisma = new PrismaService(service.database.url);
    await prisma.$connect();
    const lifecycle = new JobLifecycleRepository(prisma);
    // The write is fenced by the attempt that holds the job: the finished job is given one to time
    // it, on a worker that offers no slot and stays alive meanwhile (else the scheduler requeues it).
    await prisma.worker.create({ data: { id: 'bench-writer', hostname: 'bench', backend: 'wasm', device: 'cpu', slots: 0, lastHeartbeatAt: new Date(Date.now() + 3_600_000) } });
    const { attempt } = await prisma.job.update({ where: { id: job.id }, data: { status: 'running', workerId: 'bench-writer' } });
    const token = { jobId: job.id, attempt, workerId: 'bench-writer' };
    const sample = metrics.data[Math.floor(metrics.data.length / 2)].metrics;
    const trajectories: TrajectoryRecord[] = Array.from({ length: 64 }, (_, i) => ({
      group: Math.floor(i / 8), sample: i % 8, envSeed: 1000 + i, return: 0.1, success: i % 2 === 0, turns: 1, actions: 1,
      formatErrors: 0, tokens: 9, meanEntropy: 0.5, ...(i % 8 === 0 ? { text: '--- turn 1 ---\nArms : dragon phoenix\n> <think> t1 </think> <answer> dragon </answer>\nreward 1' } : {}),
    }));
    const writes: number[] = [];
    for (let step = 1000; step < 1050; step++) {
      const t = process.hrtime.bigint();
      await lifecycle.saveStep(token, step, 2000, sample, trajectories);
      writes.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    await prisma.$disconnect();
    const writeMs = median(writes);
    console.log(`\nworker, per training step: persisting metrics + 64 trajectories takes ${writeMs.toFixed(1)} ms (median of 50) = ${((100 * writeMs) / stepMs).toFixed(1)}% of this job's ${stepMs.toFixed(0)} ms step`);
  } finally {
    await service.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

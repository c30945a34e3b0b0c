/**
 * bench/scheduling: how fast and how fair the scheduler is.
 *
 *   npm run bench:scheduling -- [--jobs 40] [--admit 1000]
 *
 * 1. Submit-to-running latency with idle capacity: real API, Postgres, Redis and a worker
 *    process; each job is submitted when the previous one is running; median and p99 of
 *    (startedAt − createdAt) over --jobs jobs.
 * 2. Admission throughput: --admit queued jobs and announced capacity for all of them (a worker
 *    row, no consumer), one scheduler pass timed until every job is handed to the queue.
 * 3. Fair share under a skewed load: a discrete-event simulation driven by the production
 *    planner (fair-share.ts) over 8 slots and three users who submit 60, 20 and 5 jobs: each
 *    user's share of slot-time while all of them have work waiting, against an equal share.
 * 4. Cost as the lab grows: one user with 20 queued jobs, then 10, 25, 50 and 100 more users
 *    with 50 queued jobs each (up to 5,020 jobs of 101 users; no worker, so all of them wait);
 *    at each size the median time, sequentially, of that user's submission, a GET of one of
 *    their queued jobs and a GET /v1/queue (first page), against the smallest size. The API
 *    runs in the bench's process (requests are sequential, so they do not compete with it).
 *
 *   npm run bench:scheduling -- --parts growth      (any of fairness,admission,latency,growth)
 */
import { parseArgs } from 'node:util';
import { DispatchService } from '../src/services/dispatch.service';
import { decayedUsage, planAdmission, PendingJob } from '../src/services/fair-share';
import { Rng } from '../src/training/random';
import { TestStack, tinyJob } from '../test/support/stack';

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function latency(jobs: number): Promise<void> {
  const stack = await new TestStack().start();
  try {
    stack.startWorker('bench', { STARLAB_WORKER_SLOTS: '2' });
    // Measure scheduling, not the worker's start-up: wait until it announces its slots.
    while ((await stack.request('GET', '/v1/queue')).body.capacity.cpu.slots === 0) await new Promise((r) => setTimeout(r, 100));
    const latencies: number[] = [];
    for (let i = 0; i < jobs; i++) {
      const { body } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 1, name: `lat-${i}` }) });
      await stack.waitForJob(body.id, (j) => j.status !== 'queued', 60_000);
      const row = await stack.prisma.job.findUniqueOrThrow({ where: { id: body.id } });
      latencies.push(row.startedAt!.getTime() - row.createdAt.getTime());
      await stack.waitForJob(body.id, (j) => ['succeeded', 'failed'].includes(j.status), 60_000);
    }
    console.log(`1. submit → running with idle capacity (${jobs} jobs): median ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${Math.max(...latencies)} ms`);
  } finally {
    await stack.stop();
  }
}

async function admission(count: number): Promise<void> {
  const stack = await new TestStack().start();
  try {
    const dispatch = stack.app.get(DispatchService);
    await dispatch.onModuleDestroy(); // stop the periodic loop: this bench runs one pass itself
    const owner = await stack.prisma.user.findUniqueOrThrow({ where: { name: 'admin' } });
    const spec = (await stack.request('POST', '/v1/jobs', { body: tinyJob({ name: 'template' }) })).body.spec;
    await stack.prisma.job.deleteMany({});
    await stack.prisma.job.createMany({
      data: Array.from({ length: count }, (_, i) => ({ ownerId: owner.id, name: `adm-${i}`, spec, status: 'queued' as const, priority: 0, labels: {}, totalSteps: 1 })),
    });
    // Capacity for every job, announced by a worker that never consumes.
    await stack.prisma.worker.create({ data: { id: 'phantom', hostname: 'bench', backend: 'wasm', device: 'cpu', slots: count, running: 0 } });
    await stack.prisma.user.update({ where: { id: owner.id }, data: { maxRunningJobs: count } });
    const started = process.hrtime.bigint();
    dispatch.kick();
    await dispatch.idle();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const admitted = await stack.prisma.job.count({ where: { dispatchedAt: { not: null } } });
    console.log(`2. admission: ${admitted}/${count} jobs handed to the queue in ${seconds.toFixed(2)} s = ${(admitted / seconds).toFixed(0)} jobs/s`);
  } finally {
    await stack.stop();
  }
}

/** Slot-time shares while every user is backlogged, simulated with the real planner. */
function fairness(): void {
  const slots = 8;
  const halfLifeS = 3600;
  const rng = new Rng(42);
  const submitted: Record<string, number> = { heavy: 60, medium: 20, light: 5 };
  const pending: PendingJob[] = [];
  let id = 0;
  for (const [user, n] of Object.entries(submitted)) {
    for (let i = 0; i < n; i++) pending.push({ id: `j${id++}`, ownerId: user, priority: 0, device: 'cpu', createdAt: new Date(i * 1000) });
  }
  const durationOf = new Map(pending.map((j) => [j.id, 600 + rng.int(1800)])); // 10–40 min each
  const running: { job: PendingJob; end: number; start: number }[] = [];
  const history: { userId: string; startedAt: Date; endedAt: Date | null }[] = [];
  const slotTime: Record<string, number> = { heavy: 0, medium: 0, light: 0 };
  let now = 0;
  let contendedUntil = 0;
  while (pending.length > 0 || running.length > 0) {
    const nowDate = new Date(now * 1000);
    const users = Object.keys(submitted).map((userId) => ({
      userId,
      active: running.filter((r) => r.job.ownerId === userId).length,
      maxRunning: slots,
      decayedUsage: decayedUsage(history.filter((h) => h.userId === userId).map((h) => ({ startedAt: h.startedAt, endedAt: h.endedAt && h.endedAt <= nowDate ? h.endedAt : null })), nowDate, halfLifeS),
    }));
    for (const p of planAdmission(pending, users, { slots: { gpu: 0, cpu: slots }, busy: { gpu: 0, cpu: running.length } })) {
      if (!p.admit) continue;
      const job = pending.splice(pending.findIndex((j) => j.id === p.jobId), 1)[0];
      const end = now + durationOf.get(job.id)!;
      running.push({ job, start: now, end });
      history.push({ userId: job.ownerId, startedAt: nowDate, endedAt: new Date(end * 1000) });
    }
    const next = Math.min(...running.map((r) => r.end));
    const backlogged = Object.keys(submitted).every((u) => pending.some((j) => j.ownerId === u));
    if (backlogged) {
      for (const r of running) slotTime[r.job.ownerId] += next - now;
      contendedUntil = next;
    }
    now = next;
    for (let i = running.length - 1; i >= 0; i--) if (running[i].end <= now) running.splice(i, 1);
  }
  const total = Object.values(slotTime).reduce((a, b) => a + b, 0);
  console.log(`3. fair share, ${slots} slots, users submitting ${Object.entries(submitted).map(([u, n]) => `${u} ${n}`).join(', ')} jobs of 10–40 min (simulated with the production planner)`);
  console.log(`   while all three had jobs waiting (first ${(contendedUntil / 3600).toFixed(1)} h): ${Object.entries(slotTime).map(([u, t]) => `${u} ${((100 * t) / total).toFixed(1)}%`).join(', ')} of slot-time (equal share 33.3%)`);
}

async function growth(samples: number): Promise<void> {
  // The dispatcher's default interval, so its passes over the whole queue load the API as they would.
  const stack = await new TestStack({ apiEnv: { STARLAB_DISPATCH_INTERVAL_MS: '1000' } }).start();
  try {
    const { body: first } = await stack.request('POST', '/v1/users', { body: { name: 'measured' } });
    const key = first.apiKey.key as string;
    await stack.prisma.user.update({ where: { id: first.user.id }, data: { maxQueuedJobs: 10_000 } });
    const spec = (await stack.request('POST', '/v1/jobs', { key, body: tinyJob({ name: 'template' }) })).body.spec;
    const seed = (ownerId: string, count: number, name: string) =>
      stack.prisma.job.createMany({ data: Array.from({ length: count }, (_, i) => ({ ownerId, name: `${name}-${i}`, spec, status: 'queued' as const, priority: 0, labels: {}, totalSteps: 1 })) });
    await seed(first.user.id, 19, 'own');
    const timed = async (run: () => Promise<{ status: number }>, expected: number) => {
      const started = process.hrtime.bigint();
      const { status } = await run();
      if (status !== expected) throw new Error(`expected ${expected}, got ${status}`);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const target = (await stack.request('GET', '/v1/jobs?status=queued&limit=1', { key })).body.data[0].id as string;
    console.log(`4. cost as the lab grows (median of ${samples} sequential requests each; the measured user has 20+ queued jobs)`);
    console.log('   queued jobs  users   submission ms   GET job ms   GET /v1/queue ms   (× the smallest size)');
    let others = 0;
    let base: number[] | null = null;
    for (const users of [0, 10, 25, 50, 100]) {
      for (; others < users; others++) {
        const { body } = await stack.request('POST', '/v1/users', { body: { name: `user-${others}` } });
        await seed(body.user.id, 50, `u${others}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1500)); // a dispatcher pass has seen the new jobs
      const submit: number[] = [];
      const get: number[] = [];
      const queue: number[] = [];
      // One endpoint at a time, each request after the previous answer (the dispatcher's passes go on meanwhile).
      for (let i = 0; i < samples; i++) submit.push(await timed(() => stack.request('POST', '/v1/jobs', { key, body: tinyJob({ name: `grow-${users}-${i}` }) }), 201));
      for (let i = 0; i < samples; i++) get.push(await timed(() => stack.request('GET', `/v1/jobs/${target}`, { key }), 200));
      for (let i = 0; i < samples; i++) queue.push(await timed(() => stack.request('GET', '/v1/queue', { key }), 200));
      const medians = [submit, get, queue].map((xs) => quantile(xs, 0.5));
      base ??= medians;
      const queued = await stack.prisma.job.count({ where: { status: 'queued' } });
      console.log(
        `   ${String(queued).padStart(11)} ${String(users + 1).padStart(6)}   ${medians.map((m, i) => `${m.toFixed(1).padStart(8)} (${(m / base![i]).toFixed(1)}×)`).join('  ')}`,
      );
    }
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { jobs: { type: 'string', default: '40' }, admit: { type: 'string', default: '1000' }, parts: { type: 'string', default: 'fairness,admission,latency,growth' }, samples: { type: 'string', default: '15' } } });
  const parts = new Set(values.parts.split(','));
  if (parts.has('fairness')) fairness();
  if (parts.has('admission')) await admission(Number(values.admit));
  if (parts.has('latency')) await latency(Number(values.jobs));
  if (parts.has('growth')) await growth(Number(values.samples));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

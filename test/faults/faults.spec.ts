import IORedis from 'ioredis';
import { PrivatePostgres, PrivateRedis } from '../support/servers';
import { TestStack, tinyJob } from '../support/stack';

/**
 * docs/failure-behaviour.md against real processes: a server goes away mid-run and comes back,
 * and nothing a user relies on is lost. Every test that stops a server stops one of its own
 * (servers.ts), never the machine's shared Postgres or Redis.
 */

const STEPS = 60;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Every step's metrics, trajectories and step event exactly once: 0..steps, no gap, no repeat. */
async function expectEveryStepOnce(stack: TestStack, jobId: string, steps: number, trajectoriesPerStep: number): Promise<void> {
  const metrics = (await stack.request('GET', `/v1/jobs/${jobId}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
  expect(metrics).toEqual(range(steps + 1));
  const trajectories = (await stack.request('GET', `/v1/jobs/${jobId}/trajectories?from=1&to=${steps}&limit=1000`)).body.data;
  expect(trajectories).toHaveLength(steps * trajectoriesPerStep);
  const events = (await stack.request('GET', `/v1/jobs/${jobId}/events?limit=1000`)).body.data;
  const stepEvents = events.filter((e: { type: string }) => e.type === 'step').map((e: { data: { step: number } }) => e.data.step);
  expect(stepEvents).toEqual(range(steps + 1));
}

/** How long one teardown part may take before the next runs anyway (under load, pg_ctl alone can take seconds). */
const PART_MS = 25_000;
const TEARDOWN_MS = 3 * PART_MS + 5_000;

/**
 * Tears everything down in order (the stack before its servers), even when a part fails or hangs:
 * each part has PART_MS, so one that hangs is named in the error and the servers after it still
 * stop. Rethrows the first error.
 */
async function cleanup(...parts: [name: string, part: () => Promise<unknown>][]): Promise<void> {
  let first: unknown = null;
  for (const [name, part] of parts) {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`teardown: ${name} did not finish within ${PART_MS} ms`)), PART_MS);
    });
    try {
      await Promise.race([part(), hung]);
    } catch (error) {
      first ??= error;
    } finally {
      clearTimeout(timer);
    }
  }
  if (first) throw first;
}

describe('Redis restarted (empty) during a run', () => {
  let redis: PrivateRedis | undefined;
  let stack: TestStack | undefined;

  beforeAll(async () => {
    redis = await PrivateRedis.create();
    stack = new TestStack({ redisUrl: redis.url });
    await stack.start();
  }, 60_000);
  afterAll(() => cleanup(['the stack', async () => stack?.stop()], ['Redis', async () => redis?.destroy()]), TEARDOWN_MS);

  it('finishes the running job with every step exactly once, and re-sends a queued job whose carrier was lost', async () => {
    const s = stack!;
    const worker = s.startWorker('survivor');
    // A second worker announces a free slot, then freezes: the scheduler admits a job to the queue
    // for it, and that carrier waits in Redis (the survivor's only slot is busy) until Redis loses it.
    const frozen = s.startWorker('frozen');
    await until(async () => (await s.request('GET', '/v1/queue')).body.workers?.length === 2, 30_000, () => frozen.output.slice(-3000));
    frozen.kill('SIGSTOP');

    const { body: running } = await s.request('POST', '/v1/jobs', { body: tinyJob({ steps: STEPS, checkpointEvery: 4, name: 'through-redis-restart' }) });
    await s.waitForJob(running.id, (j) => j.status === 'running' && j.worker === 'survivor', 30_000);
    const { body: waiting } = await s.request('POST', '/v1/jobs', { body: tinyJob({ steps: 6, name: 'carrier-lost' }) });
    const probe = new IORedis(redis!.url);
    try {
      await until(async () => (await probe.keys(`${s.queuePrefix}:*:${waiting.id}`)).length > 0, 10_000, () => 'the second job was never sent to the queue');
    } finally {
      probe.disconnect();
    }
    await s.waitForJob(running.id, (j) => j.status === 'running' && j.currentStep >= 8, 60_000);

    // Down until the worker has noticed, then back EMPTY: every BullMQ key is gone, the running
    // job's carrier and lock and the waiting job's carrier with them.
    const before = worker.output.length;
    await redis!.stop();
    await until(() => /ECONNREFUSED|Connection is closed/.test(worker.output.slice(before)), 30_000, () => worker.output.slice(-3000));
    await redis!.start();
    frozen.kill('SIGKILL'); // it never took the waiting job
    expect((await s.request('GET', `/v1/jobs/${running.id}`)).body.currentStep).toBeLessThan(STEPS);

    const done = await s.waitForJob(running.id, (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), 60_000);
    expect(done).toMatchObject({ status: 'succeeded', currentStep: STEPS, attempt: 1, worker: 'survivor' });
    await expectEveryStepOnce(s, running.id, STEPS, 2 * 4);

    // The dispatcher finds the waiting job's carrier gone and sends it again; the survivor trains it.
    const next = await s.waitForJob(waiting.id, (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), 45_000);
    expect(next).toMatchObject({ status: 'succeeded', currentStep: 6, attempt: 1, worker: 'survivor' });
    await expectEveryStepOnce(s, waiting.id, 6, 2 * 4);
    expect(worker.alive).toBe(true);
  }, 150_000);
});

describe('API restarted while a client streams', () => {
  let stack: TestStack | undefined;

  beforeAll(async () => {
    // The API runs as its own process; Postgres and Redis are not touched (the shared ones).
    stack = new TestStack({ api: 'process' });
    await stack.start();
    stack.startWorker('streamed-worker');
  }, 60_000);
  afterAll(() => cleanup(['the stack', async () => stack?.stop()]), TEARDOWN_MS);

  /**
   * Streams a running job, restarts the API under the open stream with `signal`, reconnects with
   * Last-Event-ID and checks that the two connections together delivered every event of the job
   * (GET /events) exactly once, in order, and that the run went on across the restart.
   */
  async function streamAcrossRestart(signal: NodeJS.Signals, graceMs: number) {
    const s = stack!;
    // Long enough that the job is still training after the API's restart (a boot takes seconds
    // when the machine is busy; at 150 steps the job once finished during it).
    const steps = 400;
    const { body: job } = await s.request('POST', '/v1/jobs', { body: tinyJob({ steps, checkpointEvery: 4, name: `streamed-through-${signal}` }) });
    let restart: Promise<{ stop: { exit: number | NodeJS.Signals | null; forced: boolean } }> | null = null;
    const first = await readStream(s, job.id, undefined, (event) => {
      // Mid-run, with the stream open: stop the API (the stream ends under the reader), start it again.
      restart ??= event.type === 'step' && event.step >= 5 ? s.stopApi(signal, graceMs).then(async (stop) => (await s.startApi(), { stop })) : null;
    });
    expect(restart).not.toBeNull();
    const { stop } = await restart!;
    expect(first.ended).not.toBe('complete');
    expect((await s.request('GET', `/v1/jobs/${job.id}`)).body.status).toBe('running'); // still going when the client comes back

    // Back on the stream, the run goes on; 20 steps later it is cancelled (its last events, the
    // cancel's included, still come down this stream), rather than trained to its 400th step.
    let cancel: Promise<unknown> | null = null;
    const second = await readStream(s, job.id, String(first.ids[first.ids.length - 1]), (event) => {
      if (event.type === 'step' && event.step >= (first.steps.at(-1) ?? 0) + 20) cancel ??= s.request('POST', `/v1/jobs/${job.id}/cancel`);
    });
    await cancel;
    expect(second.ended).toBe('complete');
    expect(second.steps.length).toBeGreaterThanOrEqual(20);
    const ended = (await s.request('GET', `/v1/jobs/${job.id}`)).body;
    // (Succeeded only if the restart took so long that fewer than 20 steps were left.)
    expect(ended.status).toBe(ended.currentStep < steps ? 'cancelled' : 'succeeded');
    const all = (await s.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { id: number }) => e.id);
    const received = [...first.ids, ...second.ids];
    expect(new Set(received).size).toBe(received.length); // nothing twice
    expect(received).toEqual(all); // nothing missing, in order
    expect([...first.steps, ...second.steps]).toEqual(range(ended.currentStep + 1));
    return { first, stop };
  }

  it('killed (SIGKILL) and started again: the client resumes with Last-Event-ID without gap or repeat', async () => {
    const { first } = await streamAcrossRestart('SIGKILL', 10_000);
    expect(first.ended).toBe('reset');
  }, 180_000);

  /*
   * On SIGTERM, Nest closes the HTTP server only after the destroy hooks, and server.close() waits
   * for every open connection; an SSE stream stays open until its job finishes. So shutdown ends
   * open streams first (ResultsService aborts them), the client sees the stream end early and
   * resumes with Last-Event-ID, and the API exits without being killed.
   */
  it('stopped with SIGTERM: open streams end, the API exits promptly, the client resumes without gap or repeat', async () => {
    const { first, stop } = await streamAcrossRestart('SIGTERM', 5000);
    expect(stop.forced).toBe(false);
    expect(first.ended).toBe('ended early');
  }, 180_000);
});

describe('Postgres briefly unavailable during a run', () => {
  let postgres: PrivatePostgres | undefined;
  let stack: TestStack | undefined;

  beforeAll(async () => {
    postgres = await PrivatePostgres.create();
    stack = new TestStack({ databaseBaseUrl: postgres.url });
    await stack.start();
  }, 60_000);
  afterAll(
    () =>
      cleanup(
        ['restarting Postgres', async () => (postgres && !postgres.running ? postgres.start() : undefined)], // a failed test may have left it stopped
        ['the stack', async () => stack?.stop()],
        ['Postgres', async () => postgres?.destroy()],
      ),
    TEARDOWN_MS,
  );

  it('retries the writes and finishes the run with every step exactly once', async () => {
    const s = stack!;
    const worker = s.startWorker('patient');
    const { body: job } = await s.request('POST', '/v1/jobs', { body: tinyJob({ steps: STEPS, checkpointEvery: 4, name: 'through-postgres-outage' }) });
    await s.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 8, 60_000);

    const before = worker.output.length;
    const stoppedAt = Date.now();
    await postgres!.stop('fast'); // every connection is terminated (57P01), then nothing listens
    // Down for at least 5 s, and until the worker has seen a write fail and is retrying it.
    await until(() => /job \S+: .+ failed \(attempt \d+\), retrying/.test(worker.output.slice(before)), 30_000, () => worker.output.slice(-3000));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5000 - (Date.now() - stoppedAt))));
    await postgres!.start();

    const done = await s.waitForJob(job.id, (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), 60_000);
    expect(done).toMatchObject({ status: 'succeeded', currentStep: STEPS, attempt: 1, worker: 'patient' });
    await expectEveryStepOnce(s, job.id, STEPS, 2 * 4);
    expect(worker.alive).toBe(true);
  }, 120_000);
});

/** Polls `condition` every 50 ms. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface StreamEvent {
  id: number;
  type: string;
  step: number;
}

/**
 * Reads GET /v1/jobs/{id}/stream until the server ends it: `complete` when it ended after the job
 * finished, `ended early` when the server ended it cleanly before that, `reset` when the connection
 * broke. Only complete events (ended by a blank line) count.
 */
async function readStream(stack: TestStack, jobId: string, lastEventId?: string, onEvent: (event: StreamEvent) => void = () => undefined) {
  const ids: number[] = [];
  const steps: number[] = [];
  const response = await fetch(`${stack.baseUrl}/v1/jobs/${jobId}/stream`, {
    headers: { Authorization: `Bearer ${stack.adminKey}`, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const decoder = new TextDecoder();
  let buffer = '';
  let ended: 'complete' | 'ended early' | 'reset' = 'complete';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop()!;
      for (const block of blocks) {
        const id = /^id: (\d+)$/m.exec(block);
        if (!id) continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]) as { type: string; data: { step?: number } | null };
        const event = { id: Number(id[1]), type: data.type, step: data.data?.step ?? -1 };
        ids.push(event.id);
        if (event.type === 'step') steps.push(event.step);
        onEvent(event);
      }
    }
  } catch {
    ended = 'reset'; // the connection broke under the reader
  }
  if (ended === 'complete') {
    // The API may be down right now (restarting): then the job's state is unknown, so not finished.
    const { status } = (await stack.request('GET', `/v1/jobs/${jobId}`).catch(() => ({ body: { status: 'unknown' } }))).body;
    if (!['succeeded', 'failed', 'cancelled'].includes(status)) ended = 'ended early';
  }
  return { ids, steps, ended };
}

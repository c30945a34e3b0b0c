import { loadPolicyFromCheckpoint } from '../../src/training/checkpoint';
import { generate } from '../../src/training/policy/generate';
import { Rng } from '../../src/training/random';
import { useTestBackend } from '../support/tf';
import { hasEnded } from '../../src/services/job-lifecycle';
import { TestStack, tinyJob } from '../support/stack';
import { WARMUP_REPORT_EVERY } from '../../src/training/warmup-report';

/** Submit → train on a real worker process → read every result back through real HTTP. */
describe('job lifecycle (real HTTP, Postgres, Redis, worker process)', () => {
  const stack = new TestStack();

  beforeAll(async () => {
    await useTestBackend();
    await stack.start();
    stack.startWorker('worker-a');
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('trains a submitted job to success and serves its metrics, events, trajectories and checkpoints', async () => {
    const submitted = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 6, checkpointEvery: 4 }) });
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({ status: 'queued', totalSteps: 6, owner: { name: 'admin' }, queue: { position: 1 } });
    const id = submitted.body.id;

    const done = await stack.waitForJob(id, (job) => hasEnded(job.status));
    expect(done).toMatchObject({ status: 'succeeded', currentStep: 6, progress: 1, attempt: 1, backend: 'wasm', worker: 'worker-a', error: null, controlRequest: null });
    // Bandit pays 0.1 (low arm), 0 or 1 (high arm), less 0.1 for a malformed turn: a mean in [−0.1, 1] (NaN fails).
    expect(done.latestMetrics['reward/mean']).toBeGreaterThanOrEqual(-0.1);
    expect(done.latestMetrics['reward/mean']).toBeLessThanOrEqual(1);

    const metrics = await stack.request('GET', `/v1/jobs/${id}/metrics`);
    expect(metrics.body.data.map((row: { step: number }) => row.step)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const filtered = await stack.request('GET', `/v1/jobs/${id}/metrics?names=success/rate,entropy/mean&from=2&to=3`);
    expect(filtered.body.data.map((row: { step: number; metrics: object }) => [row.step, Object.keys(row.metrics).sort()])).toEqual([
      [2, ['entropy/mean', 'success/rate']],
      [3, ['entropy/mean', 'success/rate']],
    ]);
    for (const { metrics: m } of filtered.body.data) {
      // 8 rollouts a step: a success rate in eighths; entropy of a distribution is ≥ 0.
      expect(Number.isInteger(m['success/rate'] * 8) && m['success/rate'] >= 0 && m['success/rate'] <= 1).toBe(true);
      expect(m['entropy/mean']).toBeGreaterThanOrEqual(0);
    }

    const trajectories = await stack.request('GET', `/v1/jobs/${id}/trajectories?step=3&limit=100`);
    expect(trajectories.body.data).toHaveLength(2 * 4);
    const withText = await stack.request('GET', `/v1/jobs/${id}/trajectories?withText=true&from=0&limit=1000`);
    expect(withText.body.data).toHaveLength(6 * 2);
    expect(withText.body.data[0].text).toContain('Arms :');
    // Without a step or range: the latest step, page after page.
    const first = await stack.request('GET', `/v1/jobs/${id}/trajectories?limit=5`);
    const second = await stack.request('GET', `/v1/jobs/${id}/trajectories?limit=5&after=${first.body.next_cursor}`);
    expect([...first.body.data, ...second.body.data].map((t: { step: number }) => t.step)).toEqual(Array(2 * 4).fill(6));
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });

    const events = await stack.request('GET', `/v1/jobs/${id}/events?limit=1000`);
    const messages = events.body.data.map((e: { type: string; message: string }) => `${e.type}:${e.message}`);
    expect(messages[0]).toBe('state:queued');
    expect(messages).toContain('state:running on worker-a (attempt 1)');
    expect(messages[messages.length - 1]).toBe('state:succeeded at step 6');
    const ids = events.body.data.map((e: { id: number }) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const checkpoints = await stack.request('GET', `/v1/jobs/${id}/checkpoints`);
    expect(checkpoints.body.data.map((c: { step: number }) => c.step)).toEqual([0, 4, 6]);
    const last = checkpoints.body.data[2];
    const download = await fetch(`${stack.baseUrl}${last.downloadUrl}`, { headers: { Authorization: `Bearer ${stack.adminKey}` } });
    expect(download.status).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(bytes.length).toBe(last.sizeBytes);
    const { model, tokenizer, step } = loadPolicyFromCheckpoint(bytes);
    expect(step).toBe(6);
    const prompt = [tokenizer.id('<bos>'), tokenizer.id('<obs>'), ...tokenizer.encode('Arms : dragon phoenix'), tokenizer.id('<resp>')];
    const [answer] = generate(model, [prompt], { temperature: 0, maxNewTokens: 12, eosId: tokenizer.id('<eos>'), rng: new Rng(1) });
    expect(answer.tokens.length).toBeGreaterThan(0);
    model.dispose();
  }, 120_000);

  it('cancels a running job: 202 with the request pending, which no pause or preempt replaces; it ends cancelled', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 5000, checkpointEvery: 0, name: 'long' }) });
    const running = await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 2);
    // Its pace: the warm-up done, and an ETA from the steps timed so far.
    expect(running.warmup).toEqual({ kind: 'format', steps: 3, completed: 3, etaSeconds: null });
    expect(running.eta.secondsPerStep).toBeGreaterThan(0);
    // The remaining steps at the measured pace, less the time since the last step (seconds on a
    // loaded machine): within a tenth of the whole.
    expect(running.eta.seconds).toBeGreaterThan(0.9 * running.eta.secondsPerStep * (5000 - running.currentStep));
    expect(running.eta.seconds).toBeLessThanOrEqual(running.eta.secondsPerStep * (5000 - running.currentStep));
    expect(Date.parse(running.eta.finishAt)).toBeGreaterThan(Date.now());
    const cancel = await stack.request('POST', `/v1/jobs/${job.id}/cancel`);
    // Accepted for the running attempt, and visible as pending until it is carried out.
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ status: 'running', controlRequest: 'cancel' });
    // A pause or preempt after it never replaces it (409, the job is cancelling or cancelled).
    expect((await stack.request('POST', `/v1/jobs/${job.id}/pause`)).status).toBe(409);
    expect((await stack.request('POST', `/v1/jobs/${job.id}/preempt`)).status).toBe(409);
    const cancelled = await stack.waitForJob(job.id, (j) => hasEnded(j.status), 30_000);
    expect(cancelled).toMatchObject({ status: 'cancelled', controlRequest: null });
    expect(cancelled.finishedAt).not.toBeNull();
    const again = await stack.request('POST', `/v1/jobs/${job.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe(`job ${job.id} has already ended: it is cancelled`);
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.filter((e: { type: string }) => e.type === 'state').map((e: { message: string }) => e.message);
    expect(events.filter((m: string) => /^(succeeded|failed|cancelled|paused)/.test(m))).toEqual(['cancelled']);
  }, 120_000);

  it('pauses a job during its warm-up without waiting for the warm-up to end, and the resumed job trains it again to the end', async () => {
    const spec = tinyJob({ steps: 2, name: 'long-warm-up' });
    spec.training.warmup = { steps: 800, batchSize: 8 };
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: spec });
    // The warm-up reports every WARMUP_REPORT_EVERY of its 800 steps: at the first report it has most of them ahead.
    const events = async () => (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    const deadline = Date.now() + 60_000;
    while (!(await events()).some((m: string) => m.startsWith(`warm-up format ${WARMUP_REPORT_EVERY}/800`))) {
      if (Date.now() > deadline) throw new Error('the warm-up never reported');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pause = await stack.request('POST', `/v1/jobs/${job.id}/pause`);
    expect(pause.status).toBe(202);
    expect(pause.body).toMatchObject({ status: 'running', controlRequest: 'pause', currentStep: 0 });
    const paused = await stack.waitForJob(job.id, (j) => j.status !== 'running', 30_000);
    expect(paused).toMatchObject({ status: 'paused', currentStep: 0, latestMetrics: null, controlRequest: null });
    const stoppedAt = (await events()).find((m: string) => m.startsWith('warm-up format stopped after'));
    expect(stoppedAt).toMatch(/^warm-up format stopped after \d+\/800 steps; it starts over when the job resumes$/);
    expect(Number(/after (\d+)\//.exec(stoppedAt)![1])).toBeLessThan(800);
    expect(await events()).toContain('paused during the warm-up');
    expect((await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data).toEqual([]);

    expect((await stack.request('POST', `/v1/jobs/${job.id}/resume`)).status).toBe(200);
    const done = await stack.waitForJob(job.id, (j) => hasEnded(j.status), 120_000);
    expect(done).toMatchObject({ status: 'succeeded', attempt: 2, currentStep: 2 });
    expect((await events()).filter((m: string) => m.startsWith('warm-up format 800/800'))).toHaveLength(1);
    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual([0, 1, 2]);
  }, 180_000);

  it('pauses a running job at a checkpoint and resumes it to the end without losing a step', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 40, checkpointEvery: 0, name: 'pausable' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 3);
    const pause = await stack.request('POST', `/v1/jobs/${job.id}/pause`);
    expect([pause.status, pause.body.controlRequest]).toEqual([202, 'pause']);
    const paused = await stack.waitForJob(job.id, (j) => j.status === 'paused', 15_000);
    const checkpoints = await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`);
    expect(checkpoints.body.data.map((c: { step: number }) => c.step)).toContain(paused.currentStep);
    expect((await stack.request('POST', `/v1/jobs/${job.id}/resume`)).status).toBe(200);
    const done = await stack.waitForJob(job.id, (j) => j.status === 'succeeded', 60_000);
    expect(done.attempt).toBe(2);
    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(Array.from({ length: 41 }, (_, i) => i));
  }, 120_000);

  it('streams events as SSE and resumes after Last-Event-ID without gaps or repeats', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 8, name: 'streamed' }) });
    const read = async (lastEventId?: string, stopAfter = Infinity) => {
      const controller = new AbortController();
      const response = await fetch(`${stack.baseUrl}/v1/jobs/${job.id}/stream`, {
        headers: { Authorization: `Bearer ${stack.adminKey}`, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
        signal: controller.signal,
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const decoder = new TextDecoder();
      const ids: number[] = [];
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          // Only complete events (ended by a blank line) count; the rest waits for more bytes.
          const events = buffer.split('\n\n');
          buffer = events.pop()!;
          for (const event of events) {
            const id = /^id: (\d+)$/m.exec(event);
            if (id) ids.push(Number(id[1]));
          }
          if (ids.length >= stopAfter) {
            controller.abort();
            break;
          }
        }
      } catch (error) {
        if ((error as Error).name !== 'AbortError') throw error;
      }
      return ids;
    };
    const first = await read(undefined, 3);
    expect(first.length).toBeGreaterThanOrEqual(3);
    const rest = await read(String(first[first.length - 1]));
    const all = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { id: number }) => e.id);
    expect([...first, ...rest]).toEqual(all);
    expect((await stack.request('GET', `/v1/jobs/${job.id}`)).body.status).toBe('succeeded');
  }, 120_000);

  it('answers a retried submission with the same job, and a different body under the same key with 422', async () => {
    const headers = { 'Idempotency-Key': 'retry-me-1' };
    const [a, b] = await Promise.all([
      stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 1, name: 'idem' }), headers }),
      stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 1, name: 'idem' }), headers }),
    ]);
    expect(a.body.id).toBe(b.body.id);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const other = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 2, name: 'idem' }), headers });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
  }, 60_000);
});

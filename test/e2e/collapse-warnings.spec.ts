import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../src/services/webhook-signature';
import { TestStack, tinyJob } from '../support/stack';

/**
 * A rule that fires for certain (gradient norm above 0 × its median, from step 6) drives the
 * whole warning path through real processes: stored warnings, events, checkpoint health,
 * signed webhooks with a retry, Prometheus, backtests, and the pause / rollback actions.
 */
const ALWAYS_SPIKE = [{ detector: 'grad_norm_spike', threshold: 0, warmupSteps: 5 }];

describe('collapse warnings (real HTTP, worker, webhook receiver)', () => {
  // The receiver is on loopback, which webhooks may reach only when an admin allows it.
  const stack = new TestStack({ apiEnv: { STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1' } });
  const received: { headers: IncomingHttpHeaders; body: string; status: number }[] = [];
  let receiver: Server;
  let receiverUrl: string;

  beforeAll(async () => {
    await stack.start();
    stack.startWorker('watcher');
    // The first delivery is refused (503): the retry with backoff must bring it through.
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const status = received.length === 0 ? 503 : 204;
        received.push({ headers: req.headers, body, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 60_000);
  afterAll(async () => {
    receiver.close();
    await stack.stop();
  }, 30_000);

  it('stores, streams, delivers and counts a warning, and tags checkpoints', async () => {
    const hook = await stack.request('POST', '/v1/webhooks', { body: { url: receiverUrl, events: ['collapse.warning', 'job.succeeded'] } });
    expect(hook.status).toBe(201);
    expect(hook.body.secret).toMatch(/^whsec_/);
    // Real-world URLs are accepted; other schemes and whitespace are not.
    expect((await stack.request('POST', '/v1/webhooks', { body: { url: 'https://hooks.slack.com/services/T0/B0/xyz' } })).status).toBe(201);
    for (const url of ['ftp://example.com/hook', 'https://bad host/hook', 'hooks.example.com']) {
      expect((await stack.request('POST', '/v1/webhooks', { body: { url } })).body.errors).toEqual([{ field: 'body.url', message: expect.stringContaining('must match') }]);
    }
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ steps: 8, checkpointEvery: 2 }), collapse: { action: 'warn', rules: ALWAYS_SPIKE } } });
    await stack.waitForJob(job.id, (j) => j.status === 'succeeded');

    const warnings = (await stack.request('GET', `/v1/jobs/${job.id}/warnings`)).body.data;
    expect(warnings).toEqual([{ step: 6, detector: 'grad_norm_spike', signal: 'grad_norm/actor', value: warnings[0]?.value, threshold: 0, severity: 'critical', message: expect.stringContaining('gradient norm spiked') }]);
    // The spike measured against a threshold of 0 fires at any finite value at or above it (NaN fails this).
    expect(warnings[0].value).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(warnings[0].value)).toBe(true);
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data;
    expect(events.filter((e: { type: string }) => e.type === 'warning').map((e: { data: { step: number } }) => e.data.step)).toEqual([6]);
    const health = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data.map((c: { step: number; health: string }) => `${c.step}:${c.health}`);
    expect(health).toEqual(['0:healthy', '2:healthy', '4:healthy', '6:unhealthy', '8:unhealthy']);

    // Delivered despite the first 503, signed so the receiver can verify it.
    const deadline = Date.now() + 15_000;
    while (received.filter((r) => r.status === 204).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const ok = received.filter((r) => r.status === 204).map((r) => ({ ...r, event: JSON.parse(r.body) }));
    expect(ok.map((r) => r.event.type).sort()).toEqual(['collapse.warning', 'job.succeeded']);
    const warningDelivery = ok.find((r) => r.event.type === 'collapse.warning')!;
    expect(warningDelivery.event.data).toMatchObject({ jobId: job.id, detector: 'grad_norm_spike', step: 6, severity: 'critical' });
    const headers = { id: String(warningDelivery.headers['webhook-id']), timestamp: String(warningDelivery.headers['webhook-timestamp']), signature: String(warningDelivery.headers['webhook-signature']) };
    expect(verifyWebhook(hook.body.secret, headers, warningDelivery.body)).toBe(true);
    expect(verifyWebhook('whsec_' + Buffer.from('another secret').toString('base64'), headers, warningDelivery.body)).toBe(false);
    expect(received[0].status).toBe(503);
    const deliveries = (await stack.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`)).body.data;
    // One attempt per request the receiver saw for that delivery (the 503 included if it was this one's).
    const tries = received.filter((r) => String(r.headers['webhook-id']) === headers.id).length;
    expect(deliveries.find((d: { eventType: string }) => d.eventType === 'collapse.warning')).toMatchObject({ status: 'delivered', attempts: tries });

    const prometheus = await stack.request('GET', '/metrics', { key: null });
    expect(prometheus.text).toMatch(/starlab_collapse_warnings_total\{detector="grad_norm_spike",severity="critical"\} 1/);

    // Backtests replay stored metrics: the default rules see nothing here, the job's own rule reproduces its warning.
    const defaults = await stack.request('POST', `/v1/jobs/${job.id}/warnings/backtest`, { body: { rules: [] } });
    expect(defaults.body).toMatchObject({ steps: 9, data: [] });
    const own = await stack.request('POST', `/v1/jobs/${job.id}/warnings/backtest`, { body: { rules: ALWAYS_SPIKE } });
    expect(own.body.data.map((w: { step: number; detector: string }) => `${w.step}:${w.detector}`)).toEqual(['6:grad_norm_spike']);
    const bad = await stack.request('POST', `/v1/jobs/${job.id}/warnings/backtest`, { body: { rules: [{ detector: 'vibes' }] } });
    expect(bad.status).toBe(400);

    const test = await stack.request('POST', `/v1/webhooks/${hook.body.id}/test`);
    expect(test.body).toMatchObject({ status: 'delivered', responseStatus: 204 });
  }, 120_000);

  it('pauses a job when its collapse action is pause', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ steps: 30, checkpointEvery: 2, name: 'pause-on-collapse' }), collapse: { action: 'pause', rules: ALWAYS_SPIKE } } });
    const paused = await stack.waitForJob(job.id, (j) => ['paused', 'failed', 'succeeded'].includes(j.status));
    expect(paused.status).toBe('paused');
    expect(paused.currentStep).toBeGreaterThanOrEqual(6);
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    expect(events.some((m: string) => /paused at step \d+ by collapse rule \(grad_norm_spike at step 6\)/.test(m))).toBe(true);
  }, 120_000);

  it('rolls back to the last healthy checkpoint with a lower learning rate, further back when that did not help, and stops when rollbacks run out', async () => {
    const spec = { ...tinyJob({ steps: 30, checkpointEvery: 2, name: 'rollback-on-collapse' }), collapse: { action: 'rollback', rules: ALWAYS_SPIKE, rollback: { learningRateScale: 0.5, maxRollbacks: 2 } } };
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: spec });
    const done = await stack.waitForJob(job.id, (j) => ['failed', 'succeeded'].includes(j.status), 90_000);
    const events = (await stack.request('GET', `/v1/jobs/${job.id}/events?limit=1000`)).body.data;
    const rollbacks = events.filter((e: { data: { action?: string } }) => e.data?.action === 'rollback').map((e: { message: string }) => e.message);
    // The rule fires at step 6 again after resuming from step 4, before a newer healthy
    // checkpoint exists: step 4 did not help, so the second rollback goes back to step 2.
    expect(rollbacks).toEqual([
      'rolled back to healthy checkpoint at step 4 after grad_norm_spike at step 6; learning rate 0.001 → 0.0005',
      'rolled back to healthy checkpoint at step 2 after grad_norm_spike at step 6; learning rate 0.0005 → 0.00025',
    ]);
    expect(done.spec.training.learningRate).toBe(0.00025);
    expect(done.attempt).toBe(3);
    // The same rule fires once more; with maxRollbacks 2 the job stops.
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/no rollback possible/);
    const steps = (await stack.request('GET', `/v1/jobs/${job.id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i));
  }, 120_000);
});

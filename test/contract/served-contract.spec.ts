import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import IORedis from 'ioredis';
import { ContractValidator, ServedResponse } from '../support/contract';
import { startEnvServer } from '../support/env-servers/start';
import { PrivateRedis } from '../support/servers';
import { HttpResult, TestStack, tinyJob } from '../support/stack';

/** Statuses no request from outside can provoke on a healthy service; tested elsewhere. */
const NOT_DRIVEN: Record<string, string> = {
  '500': 'an internal error (its problem shape is tested by test/e2e/bad-input.spec.ts and the fault suites)',
};
const RATE_LIMIT = 5000;
/** A body each operation accepts, so that a request gets past validation to what it tests. */
const VALID_BODIES: Record<string, unknown> = { backtestJobWarnings: { rules: [] }, updateTeam: { shareJobs: true }, updateUser: { maxQueuedJobs: 5 } };
const NO_SUCH = '00000000-0000-4000-8000-000000000000';

/**
 * The served API against its document: every operation of openapi.yaml is driven through real
 * HTTP, errors included, and every answer — status, headers, body — is validated against the
 * document by Ajv (JSON Schema 2020-12). Then every status each operation declares must have
 * been served, and every route the server mounts must be in the document.
 */
describe('the served API matches openapi.yaml', () => {
  const contract = new ContractValidator();
  const violations: string[] = [];
  let redis: PrivateRedis;
  let stack: TestStack;
  let receiver: Server;
  let receiverUrl = '';
  let member = '';
  let worker: ReturnType<TestStack['startWorker']>;

  async function call(method: string, path: string, options: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> {
    const result = await stack.request(method, path, options);
    violations.push(...contract.check({ method, url: path, status: result.status, headers: result.headers, text: result.text }));
    return result;
  }
  const expectStatus = async (status: number, method: string, path: string, options: Parameters<typeof call>[2] = {}) => {
    const result = await call(method, path, options);
    expect([`${method} ${path}`, result.status]).toEqual([`${method} ${path}`, status]);
    return result;
  };

  beforeAll(async () => {
    redis = await PrivateRedis.create();
    await redis.start();
    stack = new TestStack({ redisUrl: redis.url, apiEnv: { STARLAB_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1' } });
    await stack.start();
    worker = stack.startWorker('worker-a');
    receiver = createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await redis?.destroy();
    await new Promise((resolve) => receiver?.close(resolve));
  }, 30_000);

  it('operations, users, teams, keys, audit and webhooks answer as documented', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/openapi.yaml']) await expectStatus(200, 'GET', path);
    await expectStatus(200, 'GET', '/v1/environments');
    await expectStatus(200, 'GET', '/v1/algorithms');
    await expectStatus(200, 'GET', '/v1/queue');
    await expectStatus(200, 'GET', '/v1/usage');
    await expectStatus(400, 'GET', '/v1/usage?from=yesterday');

    const mia = await expectStatus(201, 'POST', '/v1/users', { body: { name: 'mia', team: 'vision' } });
    member = mia.body.apiKey.key;
    await expectStatus(409, 'POST', '/v1/users', { body: { name: 'mia' } });

    const envServer = await startEnvServer('python', { args: ['--max', '4', '--guesses', '2'] });
    try {
      await expectStatus(201, 'POST', '/v1/environments', { body: { id: 'guess', url: envServer.url } });
      await expectStatus(409, 'POST', '/v1/environments', { body: { id: 'guess', url: envServer.url } });
      await expectStatus(403, 'POST', '/v1/environments', { key: member, body: { id: 'mine', url: envServer.url } });
      await expectStatus(400, 'POST', '/v1/environments', { body: { id: 'frozenlake', url: envServer.url } });
      await expectStatus(200, 'GET', '/v1/environments/guess');
      await expectStatus(403, 'DELETE', '/v1/environments/guess', { key: member });
      await expectStatus(204, 'DELETE', '/v1/environments/guess');
    } finally {
      await envServer.stop();
    }
    await expectStatus(403, 'POST', '/v1/users', { key: member, body: { name: 'eve' } });
    await expectStatus(200, 'GET', '/v1/users');
    await expectStatus(403, 'GET', '/v1/users', { key: member });
    await expectStatus(200, 'GET', '/v1/users/me', { key: member });
    await expectStatus(200, 'GET', '/v1/users/mia');
    await expectStatus(404, 'GET', `/v1/users/${NO_SUCH}`);
    await expectStatus(200, 'PATCH', '/v1/users/mia', { body: { maxQueuedJobs: 20 } });
    await expectStatus(400, 'PATCH', '/v1/users/mia', { body: { maxQueuedJobs: -1 } });
    await expectStatus(403, 'PATCH', '/v1/users/mia', { key: member, body: { maxQueuedJobs: 50 } });
    await expectStatus(404, 'PATCH', `/v1/users/${NO_SUCH}`, { body: { maxQueuedJobs: 5 } });
    await expectStatus(409, 'PATCH', '/v1/users/admin', { body: { role: 'member' } });
    await expectStatus(201, 'POST', '/v1/users', { body: { name: 'bob' } });
    await expectStatus(200, 'POST', '/v1/users/bob/disable');
    await expectStatus(200, 'POST', '/v1/users/bob/enable');
    await expectStatus(409, 'POST', '/v1/users/admin/disable');
    await expectStatus(403, 'POST', '/v1/users/bob/disable', { key: member });
    await expectStatus(403, 'POST', '/v1/users/bob/enable', { key: member });
    await expectStatus(404, 'POST', `/v1/users/${NO_SUCH}/disable`);
    await expectStatus(404, 'POST', `/v1/users/${NO_SUCH}/enable`);

    await expectStatus(201, 'POST', '/v1/teams', { body: { name: 'robotics' } });
    await expectStatus(409, 'POST', '/v1/teams', { body: { name: 'robotics' } });
    await expectStatus(403, 'POST', '/v1/teams', { key: member, body: { name: 'mine' } });
    await expectStatus(400, 'POST', '/v1/teams', { body: { name: '' } });
    await expectStatus(200, 'GET', '/v1/teams');
    await expectStatus(200, 'PATCH', '/v1/teams/robotics', { body: { shareJobs: true } });
    await expectStatus(409, 'PATCH', '/v1/teams/robotics', { body: { name: 'vision' } });
    await expectStatus(403, 'PATCH', '/v1/teams/robotics', { key: member, body: { shareJobs: false } });
    await expectStatus(404, 'PATCH', `/v1/teams/${NO_SUCH}`, { body: { shareJobs: false } });

    const laptop = await expectStatus(201, 'POST', '/v1/api-keys', { key: member, body: { name: 'laptop' } });
    await expectStatus(404, 'POST', '/v1/api-keys', { key: member, body: { name: 'x', user: 'bob' } });
    await expectStatus(200, 'GET', '/v1/api-keys', { key: member });
    await expectStatus(404, 'GET', '/v1/api-keys?user=bob', { key: member });
    await expectStatus(204, 'DELETE', `/v1/api-keys/${laptop.body.id}`, { key: member });
    await expectStatus(404, 'DELETE', `/v1/api-keys/${NO_SUCH}`);

    await expectStatus(200, 'GET', '/v1/audit?limit=5');
    await expectStatus(403, 'GET', '/v1/audit', { key: member });

    const hook = await expectStatus(201, 'POST', '/v1/webhooks', { body: { url: receiverUrl, events: ['job.succeeded'] } });
    await expectStatus(200, 'GET', '/v1/webhooks');
    await expectStatus(200, 'POST', `/v1/webhooks/${hook.body.id}/test`);
    await expectStatus(200, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`);
    await expectStatus(204, 'DELETE', `/v1/webhooks/${hook.body.id}`);
    for (const [method, suffix] of [['DELETE', ''], ['POST', '/test'], ['GET', '/deliveries']]) await expectStatus(404, method, `/v1/webhooks/${NO_SUCH}${suffix}`);
  }, 60_000);

  it('jobs, their results and their checkpoints answer as documented', async () => {
    const spec = tinyJob({ steps: 4, checkpointEvery: 2, name: 'contract' });
    const first = await expectStatus(201, 'POST', '/v1/jobs', { body: spec, headers: { 'Idempotency-Key': 'contract-1' } });
    const replay = await expectStatus(200, 'POST', '/v1/jobs', { body: spec, headers: { 'Idempotency-Key': 'contract-1' } });
    expect(replay.body.id).toBe(first.body.id);
    await expectStatus(422, 'POST', '/v1/jobs', { body: { ...spec, name: 'other' }, headers: { 'Idempotency-Key': 'contract-1' } });
    const id = first.body.id;
    // A job for the GPU queue, which no worker serves here: it stays queued, without a checkpoint.
    const waiting = await expectStatus(201, 'POST', '/v1/jobs', { body: { ...tinyJob({ name: 'waits' }), device: 'gpu' } });
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/evaluations`, { body: {} });
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/fork`, { body: {} });
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/rollback`, { body: {} });
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/resume`);
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/preempt`);
    await expectStatus(200, 'POST', `/v1/jobs/${waiting.body.id}/pause`);
    await expectStatus(200, 'POST', `/v1/jobs/${waiting.body.id}/resume`);
    await expectStatus(200, 'POST', `/v1/jobs/${waiting.body.id}/cancel`);
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/cancel`);
    await expectStatus(409, 'POST', `/v1/jobs/${waiting.body.id}/pause`);

    const done = await stack.waitForJob(id, (j) => ['succeeded', 'failed'].includes(j.status), 90_000);
    expect(done.status).toBe('succeeded');
    await expectStatus(200, 'GET', '/v1/jobs?limit=5');
    await expectStatus(400, 'GET', '/v1/jobs?status=asleep');
    await expectStatus(200, 'GET', `/v1/jobs/${id}`);
    await expectStatus(404, 'GET', `/v1/jobs/${id}`, { key: member });
    await expectStatus(200, 'GET', `/v1/jobs/${id}/metrics?names=reward/mean`);
    await expectStatus(400, 'GET', `/v1/jobs/${id}/metrics?from=first`);
    await expectStatus(200, 'GET', `/v1/jobs/${id}/events?limit=5`);
    await expectStatus(400, 'GET', `/v1/jobs/${id}/events?limit=0`);
    await expectStatus(200, 'GET', `/v1/jobs/${id}/trajectories?limit=2`);
    await expectStatus(400, 'GET', `/v1/jobs/${id}/trajectories?success=maybe`);
    await expectStatus(200, 'GET', `/v1/jobs/${id}/warnings`);
    await expectStatus(400, 'GET', `/v1/jobs/${id}/warnings?minSeverity=loud`);
    await expectStatus(200, 'POST', `/v1/jobs/${id}/warnings/backtest`, { body: { rules: [] } });
    await expectStatus(400, 'POST', `/v1/jobs/${id}/warnings/backtest`, { body: { rules: 'none' } });
    const checkpoints = (await expectStatus(200, 'GET', `/v1/jobs/${id}/checkpoints`)).body.data;
    await expectStatus(200, 'GET', checkpoints[0].downloadUrl);
    await expectStatus(404, 'GET', `/v1/checkpoints/${NO_SUCH}/download`);
    for (const action of ['cancel', 'pause', 'resume', 'preempt']) await expectStatus(409, 'POST', `/v1/jobs/${id}/${action}`);
    await expectStatus(404, 'POST', `/v1/jobs/${id}/preempt`, { key: member });
    // A member may read their own job but not preempt it: 403, not 404.
    const own = await expectStatus(201, 'POST', '/v1/jobs', { body: { ...tinyJob({ name: 'members-own' }), device: 'gpu' }, key: member });
    await expectStatus(403, 'POST', `/v1/jobs/${own.body.id}/preempt`, { key: member });
    await expectStatus(200, 'POST', `/v1/jobs/${own.body.id}/cancel`, { key: member });

    const evaluation = await expectStatus(202, 'POST', `/v1/jobs/${id}/evaluations`, { body: { episodes: 4, k: 2 } });
    await expectStatus(400, 'POST', `/v1/jobs/${id}/evaluations`, { body: { environment: { id: 'sokoban' } } });
    await expectStatus(404, 'POST', `/v1/jobs/${id}/evaluations`, { body: { checkpointId: NO_SUCH } });
    await expectStatus(200, 'GET', `/v1/jobs/${id}/evaluations`);
    await expectStatus(200, 'GET', evaluation.headers.get('location')!);
    await expectStatus(404, 'GET', `/v1/jobs/${id}/evaluations/${NO_SUCH}`);
    const fork = await expectStatus(201, 'POST', `/v1/jobs/${id}/fork`, { body: { overrides: { training: { steps: 6, learningRate: 0.0005 } } } });
    await expectStatus(400, 'POST', `/v1/jobs/${id}/fork`, { body: { overrides: { model: { config: { layers: 2 } }, training: { steps: 6 } } } });
    await expectStatus(400, 'POST', `/v1/jobs/${id}/rollback`, { body: { learningRate: 5 } });
    await expectStatus(200, 'POST', `/v1/jobs/${id}/rollback`, { body: { checkpointId: checkpoints[1].id } });
    await stack.waitForJob(id, (j) => j.status === 'succeeded' && j.attempt === 2, 60_000);

    // Preempting needs a running job.
    const long = await expectStatus(201, 'POST', '/v1/jobs', { body: tinyJob({ steps: 5000, checkpointEvery: 0, name: 'long' }) });
    await stack.waitForJob(long.body.id, (j) => j.status === 'running' && j.currentStep >= 1, 60_000);
    // The worker frozen for a moment (well within its lock): requests wait for it as `controlRequest`.
    worker.kill('SIGSTOP');
    try {
      await expectStatus(202, 'POST', `/v1/jobs/${long.body.id}/preempt`);
      await expectStatus(202, 'POST', `/v1/jobs/${long.body.id}/pause`);
      await expectStatus(409, 'POST', `/v1/jobs/${long.body.id}/preempt`);
      await expectStatus(202, 'POST', `/v1/jobs/${long.body.id}/cancel`);
    } finally {
      worker.kill('SIGCONT');
    }

    // The stream: its headers and first bytes (it stays open).
    const abort = new AbortController();
    const stream = await fetch(`${stack.baseUrl}/v1/jobs/${id}/stream`, { headers: { Authorization: `Bearer ${stack.adminKey}`, 'Last-Event-ID': '1' }, signal: abort.signal });
    const reader = stream.body!.getReader();
    const { value } = await reader.read();
    abort.abort();
    const served: ServedResponse = { method: 'GET', url: `/v1/jobs/${id}/stream`, status: stream.status, headers: stream.headers, text: new TextDecoder().decode(value) };
    violations.push(...contract.check(served));
    expect(served.text).toMatch(/^retry: 2000\n\n/);
    const deadline = Date.now() + 60_000;
    while ((await call('GET', evaluation.headers.get('location')!)).body.status !== 'succeeded' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    // The next test stops the worker and expects nothing to change: no job may still be running
    // (a running job's ETA counts down with the clock).
    await stack.waitForJob(fork.body.id, (j) => ['succeeded', 'failed'].includes(j.status), 90_000);
    await stack.waitForJob(long.body.id, (j) => j.status === 'cancelled', 60_000);
  }, 300_000);

  it('experiments and archiving answer as documented', async () => {
    const body = { name: 'contract-exp', base: tinyJob({ steps: 2, checkpointEvery: 0 }), grid: { 'training.seed': [1, 2] } };
    const first = await expectStatus(201, 'POST', '/v1/experiments', { body, headers: { 'Idempotency-Key': 'exp-1' } });
    await expectStatus(200, 'POST', '/v1/experiments', { body, headers: { 'Idempotency-Key': 'exp-1' } });
    await expectStatus(422, 'POST', '/v1/experiments', { body: { ...body, name: 'other' }, headers: { 'Idempotency-Key': 'exp-1' } });
    await expectStatus(400, 'POST', '/v1/experiments', { body: { ...body, grid: { 'training.learningRate': [7] } } });
    await expectStatus(429, 'POST', '/v1/experiments', { body: { ...body, grid: { 'training.seed': Array.from({ length: 21 }, (_, i) => i) } }, key: member });
    const id = first.body.id;
    await expectStatus(409, 'DELETE', `/v1/experiments/${id}`);
    await expectStatus(409, 'DELETE', `/v1/jobs/${first.body.cells[0].runs[0].jobId}`);
    await expectStatus(200, 'GET', '/v1/experiments?limit=5');
    await expectStatus(400, 'GET', '/v1/experiments?limit=0');
    await expectStatus(200, 'GET', `/v1/experiments/${id}/curves?metric=reward/mean`);
    await expectStatus(400, 'GET', `/v1/experiments/${id}/curves?metric=${encodeURIComponent('no spaces')}`);
    await expectStatus(200, 'GET', `/v1/jobs/${first.body.cells[0].runs[0].jobId}/warmup`);
    for (const job of first.body.cells[0].runs) await stack.waitForJob(job.jobId, (j) => j.status === 'succeeded', 90_000);
    const deadline = Date.now() + 60_000;
    while ((await call('GET', `/v1/experiments/${id}`)).body.references !== 'ready' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    for (const action of ['pause', 'resume', 'cancel']) await expectStatus(200, 'POST', `/v1/experiments/${id}/${action}`);
    await expectStatus(400, 'DELETE', `/v1/experiments/${id}?purge=maybe`);
    await expectStatus(200, 'DELETE', `/v1/experiments/${id}`);
    const other = await expectStatus(201, 'POST', '/v1/jobs', { body: { ...tinyJob({ name: 'to-archive' }), device: 'gpu' } });
    await expectStatus(200, 'POST', `/v1/jobs/${other.body.id}/cancel`);
    await expectStatus(400, 'DELETE', `/v1/jobs/${other.body.id}?purge=maybe`);
    await expectStatus(200, 'DELETE', `/v1/jobs/${other.body.id}?purge=true`);
  }, 180_000);

  it('errors every operation shares: 401, 404 on unknown ids, 400/413/415 on bodies, 400 on unknown query parameters, 304, 429', async () => {
    // Nothing changes any more once the worker is gone (the queue view shows its heartbeats, usage
    // grows while a job runs), so a repeated GET finds its ETag still current.
    worker.kill('SIGKILL');
    await worker.exited;
    // fetch sends Cache-Control: no-cache with a conditional request unless told otherwise, and
    // a server must answer no-cache in full: say max-age=0, as a browser revalidating does.
    const revalidate = (etag: string) => ({ headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' } });
    const probe304 = async (path: string) => {
      const first = await expectStatus(200, 'GET', path);
      await expectStatus(304, 'GET', path, revalidate(first.headers.get('etag')!));
    };
    const pathOf = (template: string) => template.replace(/\{[^}]+\}/g, NO_SUCH);
    for (const { method, template, operation } of contract.operations()) {
      const path = pathOf(template);
      const upper = method.toUpperCase();
      const authenticated = operation.security.length > 0;
      const body = operation.requestBody ? (VALID_BODIES[operation.operationId] ?? {}) : undefined;
      if (authenticated) await expectStatus(401, upper, path, { key: null, body });
      if (authenticated && operation.responses['404'] && template.includes('{')) await expectStatus(404, upper, path, { body });
      if (operation.requestBody) {
        await expectStatus(400, upper, path, { raw: '{"unterminated' });
        await expectStatus(413, upper, path, { raw: JSON.stringify({ padding: 'x'.repeat(70_000) }) });
        await expectStatus(415, upper, path, { raw: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      }
      if ((operation.parameters ?? []).some((p: { in: string }) => p.in === 'query')) await expectStatus(400, upper, `${path}?unknownParameter=1`);
      if (operation.responses['304']) {
        // Usage defaults to a period ending now, which moves: ask for a fixed one.
        const real = template.includes('{') ? null : template === '/v1/usage' ? '/v1/usage?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z' : path;
        if (real) await probe304(real);
      }
    }
    // Path-templated GETs: a real resource's ETag.
    const { body: jobs } = await call('GET', '/v1/jobs?limit=100');
    const jobId = jobs.data.find((j: { name: string }) => j.name === 'contract').id;
    const [evaluation] = (await call('GET', `/v1/jobs/${jobId}/evaluations`)).body.data;
    for (const template of contract.operations().filter((o) => o.method === 'get' && o.operation.responses['304'] && o.template.includes('{')).map((o) => o.template)) {
      const path = template
        .replace('{evaluationId}', evaluation.id)
        .replace('/v1/users/{id}', '/v1/users/mia')
        .replace('/v1/environments/{id}', '/v1/environments/frozenlake')
        .replace('/v1/webhooks/{id}', `/v1/webhooks/${await webhookId()}`)
        .replace('/v1/experiments/{id}', `/v1/experiments/${(await call('GET', '/v1/experiments?archived=true')).body.data[0].id}`)
        .replace('{id}', jobId);
      await probe304(path);
    }

    // Over the limit: a fresh key whose window is already spent answers 429 on every operation.
    const issued = await call('POST', '/v1/api-keys', { body: { name: 'spent' } });
    const counters = new IORedis(redis.url);
    const window = Math.floor(Date.now() / 60_000);
    for (const w of [window, window + 1]) await counters.set(`${stack.queuePrefix}:ratelimit:key:${issued.body.id}:${w}`, RATE_LIMIT, 'EX', 180);
    counters.disconnect();
    for (const { method, template, operation } of contract.operations().filter((o) => o.operation.security.length > 0)) {
      const limited = await expectStatus(429, method.toUpperCase(), pathOf(template), { key: issued.body.key, body: operation.requestBody ? (VALID_BODIES[operation.operationId] ?? {}) : undefined });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, 120_000);

  async function webhookId(): Promise<string> {
    const existing = (await call('GET', '/v1/webhooks')).body.data[0];
    return existing?.id ?? (await call('POST', '/v1/webhooks', { body: { url: receiverUrl } })).body.id;
  }

  it('answers 503 on /ready while Redis is down', async () => {
    await redis.stop();
    await expectStatus(503, 'GET', '/ready');
  }, 30_000);

  it('served only what the document declares, and every status it declares', () => {
    expect(violations).toEqual([]);
    const missing = contract
      .operations()
      .flatMap(({ id, operation }) => Object.keys(operation.responses).filter((status) => !NOT_DRIVEN[status] && !contract.served.get(id)?.has(status)).map((status) => `${id} ${status}`));
    expect(missing).toEqual([]);
  });

  it('documents every route the server mounts (the dashboard’s and /docs’ static files are pages, not API)', () => {
    const router = stack.app.getHttpAdapter().getInstance().router as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
    const mounted = router.stack
      .filter((layer) => layer.route)
      .flatMap((layer) => Object.keys(layer.route!.methods).map((method) => `${method.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`));
    const documented = contract.operations().map((o) => `${o.method.toUpperCase()} ${o.template}`);
    expect(mounted.sort()).toEqual(documented.sort());
  });
});

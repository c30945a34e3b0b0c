import { TestStack, tinyJob } from '../support/stack';

/**
 * Reads stay true with the API's caches (docs/performance.md): what a caller changes through a
 * replica shows on their next read there, and what changes behind its back shows within the
 * stated bound. The bounds are set so that a pass can only come from the right mechanism: a
 * principal is kept 2 s; the queue plan and job rows are kept a minute and the dispatcher's own
 * passes come a minute apart, so a fresh queue or job read can only come from this replica's own
 * change (the copy it drops or patches, the pass it kicks).
 */
const PRINCIPAL_CACHE_MS = 2000;

describe('fresh reads through the caches (real HTTP, Postgres, Redis)', () => {
  const stack = new TestStack({ apiEnv: { STARLAB_PRINCIPAL_CACHE_MS: String(PRINCIPAL_CACHE_MS), STARLAB_QUEUE_VIEW_MS: '60000', STARLAB_JOB_VIEW_MS: '60000', STARLAB_DISPATCH_INTERVAL_MS: '60000' } });
  let ann: { id: string; key: string; keyId: string };
  let bob: { id: string; key: string; keyId: string };

  const createUser = async (name: string) => {
    const { body } = await stack.request('POST', '/v1/users', { body: { name } });
    return { id: body.user.id as string, key: body.apiKey.key as string, keyId: body.apiKey.id as string };
  };
  const submit = async (key: string, name: string) => {
    const response = await stack.request('POST', '/v1/jobs', { key, body: { ...tinyJob({ name }), device: 'cpu' } });
    expect(response.status).toBe(201);
    return response.body;
  };
  const get = async (id: string, key = ann.key) => (await stack.request('GET', `/v1/jobs/${id}`, { key })).body;

  beforeAll(async () => {
    await stack.start();
    ann = await createUser('ann');
    bob = await createUser('bob');
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('refuses a key revoked through this replica on the very next request', async () => {
    const { body: issued } = await stack.request('POST', '/v1/api-keys', { key: ann.key, body: { name: 'laptop' } });
    expect((await stack.request('GET', '/v1/jobs', { key: issued.key })).status).toBe(200);
    expect((await stack.request('DELETE', `/v1/api-keys/${issued.id}`, { key: ann.key })).status).toBe(204);
    expect((await stack.request('GET', '/v1/jobs', { key: issued.key })).status).toBe(401);
  });

  it('refuses a key revoked behind this replica (another replica, by hand in Postgres) within STARLAB_PRINCIPAL_CACHE_MS', async () => {
    const { body: issued } = await stack.request('POST', '/v1/api-keys', { key: ann.key, body: { name: 'ci' } });
    expect((await stack.request('GET', '/v1/jobs', { key: issued.key })).status).toBe(200); // now held by this replica
    const revokedAt = Date.now();
    await stack.prisma.apiKey.update({ where: { id: issued.id }, data: { revokedAt: new Date() } });
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 3 * PRINCIPAL_CACHE_MS) {
      status = (await stack.request('GET', '/v1/jobs', { key: issued.key })).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    // Within the bound, plus one request's time on a busy machine.
    expect(Date.now() - revokedAt).toBeLessThan(PRINCIPAL_CACHE_MS + 500);
  });

  it('refuses a disabled user and honours a demotion at once when done through this replica', async () => {
    const cy = await createUser('cy');
    await stack.request('PATCH', `/v1/users/${cy.id}`, { body: { role: 'admin' } });
    expect((await stack.request('GET', '/v1/users', { key: cy.key })).status).toBe(200);
    await stack.request('PATCH', `/v1/users/${cy.id}`, { body: { role: 'member' } });
    expect((await stack.request('GET', '/v1/users', { key: cy.key })).status).toBe(403);
    expect((await stack.request('POST', `/v1/users/${cy.id}/disable`)).status).toBe(200);
    expect((await stack.request('GET', '/v1/jobs', { key: cy.key })).status).toBe(401);
  });

  it('shows a submission, a pause, a resume and a cancel in the next GET of the job and of the queue', async () => {
    // No worker runs: every job waits, and the plan is kept a minute unless this replica changes it.
    const a1 = await submit(ann.key, 'a1');
    expect(a1.queue).toEqual({ position: 1, reason: 'no cpu worker is online' });
    const a2 = await submit(ann.key, 'a2');
    expect(a2.queue.position).toBe(2);
    expect((await get(a2.id)).queue.position).toBe(2);
    const b1 = await submit(bob.key, 'b1');
    // Fair share: ann's oldest, then bob's (fewer active), then ann's second.
    expect((await get(b1.id, bob.key)).queue.position).toBe(2);
    expect((await get(a2.id)).queue.position).toBe(3);
    expect((await stack.request('GET', '/v1/queue')).body.waiting.map((w: { jobId: string }) => w.jobId)).toEqual([a1.id, b1.id, a2.id]);

    const paused = (await stack.request('POST', `/v1/jobs/${a1.id}/pause`, { key: ann.key })).body;
    expect(paused).toMatchObject({ status: 'paused', queue: null });
    expect(await get(a1.id)).toMatchObject({ status: 'paused', queue: null });
    // ann's next job (a2) is older than bob's: it moves up to first.
    expect((await get(a2.id)).queue.position).toBe(1);
    expect((await get(b1.id, bob.key)).queue.position).toBe(2);

    expect((await stack.request('POST', `/v1/jobs/${a1.id}/resume`, { key: ann.key })).body.status).toBe('queued');
    expect((await get(a1.id)).queue.position).toBe(1);
    expect((await get(a2.id)).queue.position).toBe(3);

    expect((await stack.request('POST', `/v1/jobs/${b1.id}/cancel`, { key: bob.key })).body.status).toBe('cancelled');
    expect((await get(b1.id, bob.key)).status).toBe('cancelled');
    expect((await stack.request('GET', '/v1/queue')).body.waiting.map((w: { jobId: string }) => w.jobId)).toEqual([a1.id, a2.id]);
  });

  it('pages through GET /v1/queue with limit and after', async () => {
    for (let i = 0; i < 3; i++) await submit(bob.key, `b-page-${i}`);
    const all = (await stack.request('GET', '/v1/queue')).body.waiting.map((w: { jobId: string }) => w.jobId);
    expect(all).toHaveLength(5);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: { body: { waiting: { jobId: string }[]; has_more: boolean; next_cursor: string | null } } = await stack.request('GET', `/v1/queue?limit=2${after ? `&after=${after}` : ''}`);
      expect(page.body.waiting.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.waiting.map((w) => w.jobId));
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      after = page.body.next_cursor;
    } while (after);
    expect(seen).toEqual(all);
    expect((await stack.request('GET', '/v1/queue?after=nonsense')).status).toBe(400);
  });

  it('serves a finished job\'s metrics from memory, and the shorter series at once after a rollback', async () => {
    // The earlier tests' jobs would take the one slot first (and passes are a minute apart).
    await stack.prisma.job.updateMany({ where: { status: 'queued' }, data: { status: 'cancelled' } });
    const worker = stack.startWorker('fresh-reads');
    while ((await stack.prisma.worker.count()) === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 4, checkpointEvery: 2, name: 'rolls-back' }) });
    // The worker's changes reach this replica's job GET only after a minute here: watch Postgres.
    while ((await stack.prisma.job.findUniqueOrThrow({ where: { id: job.id } })).status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await get(job.id, stack.adminKey)).status).toBe('succeeded'); // read (and kept) after it finished
    const steps = async () => (await stack.request('GET', `/v1/jobs/${job.id}/metrics`)).body.data.map((r: { step: number }) => r.step);
    expect(await steps()).toEqual([0, 1, 2, 3, 4]);
    expect(await steps()).toEqual([0, 1, 2, 3, 4]); // the kept copy
    // The worker stops, so nothing trains the rolled-back job again while we look.
    worker.kill('SIGKILL');
    await worker.exited;
    const checkpoint = (await stack.request('GET', `/v1/jobs/${job.id}/checkpoints`)).body.data.find((c: { step: number }) => c.step === 2);
    const rolledBack = await stack.request('POST', `/v1/jobs/${job.id}/rollback`, { body: { checkpointId: checkpoint.id } });
    expect(rolledBack.status).toBe(200);
    expect(await steps()).toEqual([0, 1, 2]);
    // The job GET had kept the finished row; the rollback's change shows at once.
    expect(rolledBack.body.status).not.toBe('succeeded');
    expect(await get(job.id, stack.adminKey)).toMatchObject({ status: rolledBack.body.status, currentStep: 2 });
  }, 120_000);
});

describe('a job changed behind the replica (a worker, another replica) within STARLAB_JOB_VIEW_MS', () => {
  const JOB_VIEW_MS = 1500;
  const stack = new TestStack({ apiEnv: { STARLAB_JOB_VIEW_MS: String(JOB_VIEW_MS) } });
  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('serves the kept row until the bound, then the change', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ name: 'behind' }), device: 'gpu' } });
    expect((await stack.request('GET', `/v1/jobs/${job.id}`)).body.status).toBe('queued'); // now kept
    const changedAt = Date.now();
    await stack.prisma.job.update({ where: { id: job.id }, data: { status: 'paused' } });
    // Read at once, the kept row still says queued: the GET did not ask Postgres.
    expect((await stack.request('GET', `/v1/jobs/${job.id}`)).body.status).toBe('queued');
    let status = 'queued';
    while (status === 'queued' && Date.now() - changedAt < 3 * JOB_VIEW_MS) {
      status = (await stack.request('GET', `/v1/jobs/${job.id}`)).body.status;
      if (status === 'queued') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('paused');
    expect(Date.now() - changedAt).toBeLessThan(JOB_VIEW_MS + 500);
  });
});

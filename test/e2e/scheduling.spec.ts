import { hasEnded } from '../../src/services/job-lifecycle';
import { TestStack, tinyJob } from '../support/stack';

/**
 * docs/scheduling.md step by step: three users, one worker with two slots, a mix of priorities.
 * All jobs are submitted while no worker is online, so the planned order can be read and
 * checked first; then the worker starts and the jobs must start in exactly that order.
 */
describe('scheduling: fair share, priorities, quotas (three users, two slots)', () => {
  const stack = new TestStack();
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    await stack.start();
    for (const name of ['ann', 'bob', 'cy']) keys[name] = (await stack.request('POST', '/v1/users', { body: { name } })).body.apiKey.key;
    // Quotas: cy may run one job at a time and keep at most two waiting.
    const cy = await stack.prisma.user.findUniqueOrThrow({ where: { name: 'cy' } });
    await stack.prisma.user.update({ where: { id: cy.id }, data: { maxRunningJobs: 1, maxQueuedJobs: 2 } });
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  const submit = async (user: string, name: string, priority = 0) => {
    const response = await stack.request('POST', '/v1/jobs', { key: keys[user], body: { ...tinyJob({ steps: 12, checkpointEvery: 0, name }), priority } });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };

  it('plans, explains and then runs jobs in fair-share order within quotas', async () => {
    // ann floods the queue; bob and cy each bring little; priorities reorder ann's own jobs.
    const ids: Record<string, string> = {};
    for (const [user, name, priority] of [
      ['ann', 'a1', 0], ['ann', 'a2', 0], ['ann', 'a3', 5], ['ann', 'a4', 0],
      ['bob', 'b1', 0],
      ['cy', 'c1', 0], ['cy', 'c2', 0],
    ] as const) {
      ids[name] = await submit(user, name, priority);
    }
    // cy's third waiting job is over her queued quota (2): a clear 429 naming the numbers.
    const over = await stack.request('POST', '/v1/jobs', { key: keys.cy, body: tinyJob({ name: 'c3' }) });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ title: 'Quota exceeded', detail: expect.stringContaining('you have 2 queued job(s); your quota is 2') });
    expect(over.headers.get('retry-after')).toBe('60');

    // No worker yet: every job says so, and the positions are the fair-share plan:
    // round 1 (everyone has 0 active): ann's best (a3, priority 5), bob, cy; round 2: ann, cy is at
    // her running quota (1) so her second job goes last; then ann's rest.
    const view = async (name: string, user: string) => (await stack.request('GET', `/v1/jobs/${ids[name]}`, { key: keys[user] })).body;
    const owners: Record<string, string> = { a1: 'ann', a2: 'ann', a3: 'ann', a4: 'ann', b1: 'bob', c1: 'cy', c2: 'cy' };
    const planned: Record<string, { position: number; reason: string }> = Object.fromEntries(await Promise.all(Object.keys(ids).map(async (n) => [n, (await view(n, owners[n])).queue])));
    expect(planned.a3).toEqual({ position: 1, reason: 'no worker is online' });
    const order = Object.entries(planned).sort(([, a], [, b]) => a.position - b.position).map(([n]) => n);
    expect(order).toEqual(['a3', 'b1', 'c1', 'a1', 'a2', 'a4', 'c2']);
    // cy runs nothing yet: her quota of 1 is taken by c1, placed before c2.
    expect(planned.c2.reason).toBe('the owner has 0 job(s) running or starting and 1 more placed before this one; their quota of 1 is full');

    // The queue view shows others' jobs by owner only.
    const queue = (await stack.request('GET', '/v1/queue', { key: keys.bob })).body;
    expect(queue.waiting.map((w: { owner: string }) => w.owner)).toEqual(['ann', 'bob', 'cy', 'ann', 'ann', 'ann', 'cy']);
    expect(queue.waiting.filter((w: { jobId: string | null }) => w.jobId !== null).map((w: { jobId: string }) => w.jobId)).toEqual([ids.b1]);

    // A worker with two slots arrives: jobs start in plan order, never more than two at once,
    // and cy never has two running.
    stack.startWorker('two-slots', { STARLAB_WORKER_SLOTS: '2' });
    let maxConcurrent = 0;
    let cyConcurrent = 0;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const jobs = await Promise.all(Object.keys(ids).map(async (n) => ({ n, ...(await view(n, owners[n])) })));
      const running = jobs.filter((j) => j.status === 'running');
      maxConcurrent = Math.max(maxConcurrent, running.length);
      cyConcurrent = Math.max(cyConcurrent, running.filter((j) => owners[j.n] === 'cy').length);
      if (jobs.every((j) => j.status === 'succeeded')) break;
      if (Date.now() > deadline) throw new Error(`not done: ${jobs.map((j) => `${j.n}:${j.status}`).join(' ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(maxConcurrent).toBe(2);
    expect(cyConcurrent).toBe(1);
    const starts = await stack.prisma.usageRecord.findMany({ orderBy: { startedAt: 'asc' }, select: { jobId: true } });
    const names = Object.fromEntries(Object.entries(ids).map(([n, id]) => [id, n]));
    const started = starts.map((s) => names[s.jobId]);
    const before = (x: string, y: string) => expect(started.indexOf(x)).toBeLessThan(started.indexOf(y));
    // The two free slots went to ann's priority job and to bob, not to two of ann's four.
    expect(new Set(started.slice(0, 2))).toEqual(new Set(['a3', 'b1']));
    // Next came cy (fewest active jobs) and ann's second job, before any other of ann's. a3 and b1
    // are the same size and often finish together; then c1 and a1 are admitted in one pass and
    // either may reach the worker first (CI once saw a1 start a few ms before c1).
    expect(new Set(started.slice(2, 4))).toEqual(new Set(['c1', 'a1']));
    // ann's own jobs in priority, then submission order.
    before('a3', 'a1');
    before('a1', 'a2');
    before('a2', 'a4');
    // Once c1 is done cy is back under her quota and, with fewer active jobs than ann, goes before
    // ann's last job (the plan listed c2 last while c1 held her quota; whether it also passes a2
    // depends on whether c1 or a1 finishes first).
    before('c1', 'c2');
    before('c2', 'a4');

    // Usage by user over the period: everyone's slot time, members see only their own.
    const usage = (await stack.request('GET', '/v1/usage')).body.data;
    expect(usage.map((u: { user: { name: string }; jobs: number }) => `${u.user.name}:${u.jobs}`).sort()).toEqual(['ann:4', 'bob:1', 'cy:2']);
    expect(usage.reduce((n: number, u: { share: number }) => n + u.share, 0)).toBeCloseTo(1, 6);
    const own = (await stack.request('GET', '/v1/usage', { key: keys.bob })).body.data;
    expect(own.map((u: { user: { name: string } }) => u.user.name)).toEqual(['bob']);
  }, 180_000);

  it('lets an admin preempt a running job, which resumes later with every step exactly once', async () => {
    const id = await submit('bob', 'long', 0);
    await stack.waitForJob(id, (j) => j.status === 'running' && j.currentStep >= 3);
    // Bob can see his job, so he is told that preempting is for admins.
    expect((await stack.request('POST', `/v1/jobs/${id}/preempt`, { key: keys.bob })).body).toMatchObject({ status: 403, detail: 'only admins preempt jobs' });
    expect((await stack.request('POST', `/v1/jobs/${id}/preempt`)).status).toBe(202);
    const done = await stack.waitForJob(id, (j) => j.status === 'succeeded', 90_000);
    expect(done.attempt).toBe(2);
    const events = (await stack.request('GET', `/v1/jobs/${id}/events?limit=1000`)).body.data.map((e: { message: string }) => e.message);
    expect(events).toContain('preemption requested by admin admin');
    expect(events.some((m: string) => /^requeued at step \d+ \(preempt\)$/.test(m))).toBe(true);
    const steps = (await stack.request('GET', `/v1/jobs/${id}/metrics?names=reward/mean`)).body.data.map((r: { step: number }) => r.step);
    expect(steps).toEqual(Array.from({ length: 13 }, (_, i) => i));
  }, 120_000);

  it('a cancel right behind a preempt wins: the job ends cancelled, not requeued', async () => {
    const created = await stack.request('POST', '/v1/jobs', { key: keys.bob, body: tinyJob({ steps: 5000, checkpointEvery: 0, name: 'preempt-then-cancel' }) });
    const id = created.body.id as string;
    await stack.waitForJob(id, (j) => j.status === 'running' && j.currentStep >= 1);
    expect((await stack.request('POST', `/v1/jobs/${id}/preempt`)).status).toBe(202);
    const cancel = await stack.request('POST', `/v1/jobs/${id}/cancel`);
    // Still stopping for the preempt (202, the cancel replaces it), or already requeued by it and cancelled at once (200).
    expect([200, 202]).toContain(cancel.status);
    const done = await stack.waitForJob(id, (j) => hasEnded(j.status), 90_000);
    expect([done.status, done.attempt]).toEqual(['cancelled', 1]);
  }, 120_000);
});

import { TestStack, tinyJob } from '../support/stack';

/** Requests that race, through real HTTP against one API. */
describe('concurrent requests (real HTTP)', () => {
  const stack = new TestStack();

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('holds the queued-jobs quota: 20 submissions at once at a quota of 5 give exactly 5 jobs', async () => {
    const { body: created } = await stack.request('POST', '/v1/users', { body: { name: 'racer', maxQueuedJobs: 5 } });
    const key = created.apiKey.key;
    // No worker: nothing leaves the queue, so every job counts against the quota.
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => stack.request('POST', '/v1/jobs', { key, body: tinyJob({ name: `race-${i}` }) })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(15).fill(429)]);
    for (const refused of responses.filter((r) => r.status === 429)) {
      expect(refused.body).toMatchObject({ title: 'Quota exceeded', detail: 'you have 5 queued job(s); your quota is 5. Wait for some to start, or cancel some.' });
      expect(refused.headers.get('retry-after')).toBe('60');
    }
    expect(await stack.prisma.job.count({ where: { ownerId: created.user.id } })).toBe(5);
  }, 60_000);
});

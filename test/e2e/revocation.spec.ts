import { TestStack, tinyJob } from '../support/stack';

/**
 * Revocation as immediate as it can be (docs/security.md): an open event stream ends once its key
 * is revoked or its user disabled, here or on another replica (a change written straight to
 * Postgres is what this replica sees of one); failed key lookups are limited per client address.
 */
describe('revocation and failed key lookups (real HTTP)', () => {
  const stack = new TestStack({ apiEnv: { STARLAB_PRINCIPAL_CACHE_MS: '1000', STARLAB_AUTH_FAILURES_PER_MINUTE: '3' } });

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  /** Opens the job's event stream with `key`; `ended` resolves once the server ends it. */
  async function openStream(jobId: string, key: string): Promise<{ ended: Promise<'ended' | 'reset'> }> {
    const response = await fetch(`${stack.baseUrl}/v1/jobs/${jobId}/stream`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const ended = (async () => {
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) void chunk;
        return 'ended' as const;
      } catch {
        return 'reset' as const;
      }
    })();
    return { ended };
  }

  const newUser = async (name: string) => {
    const created = (await stack.request('POST', '/v1/users', { body: { name } })).body;
    return { id: created.user.id as string, key: created.apiKey.key as string, keyId: created.apiKey.id as string };
  };
  // No worker runs: a submitted job stays queued, so its stream would stay open for ever.
  const waitingJob = async (key: string, name: string) => (await stack.request('POST', '/v1/jobs', { key, body: tinyJob({ name }) })).body.id as string;

  it('ends an open stream once its key is revoked on another replica, while the job still waits', async () => {
    const ann = await newUser('ann');
    const jobId = await waitingJob(ann.key, 'streamed-then-revoked');
    const stream = await openStream(jobId, ann.key);
    await stack.prisma.apiKey.update({ where: { id: ann.keyId }, data: { revokedAt: new Date() } });
    expect(await stream.ended).toBe('ended');
    expect((await stack.request('GET', `/v1/jobs/${jobId}`)).body.status).toBe('queued');
  }, 30_000);

  it('ends an open stream once its user is disabled through the API', async () => {
    const bo = await newUser('bo');
    const jobId = await waitingJob(bo.key, 'streamed-then-disabled');
    const stream = await openStream(jobId, bo.key);
    expect((await stack.request('POST', `/v1/users/${bo.id}/disable`)).status).toBe(200);
    expect(await stream.ended).toBe('ended');
    expect((await stack.request('GET', `/v1/jobs/${jobId}`)).body.status).toBe('queued');
  }, 30_000);

  it('refuses an address with too many failed lookups in a minute with a 429 problem, and keeps serving', async () => {
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<TestStack['request']>> | null = null;
    // 3 a minute, in fixed windows: one may end mid-way, so at most 2 × 3 failures come before the refusal.
    for (let i = 0; i < 7 && !refused; i++) {
      const response = await stack.request('GET', '/v1/jobs', { key: `sl_bogus_${i}` });
      statuses.push(response.status);
      if (response.status === 429) refused = response;
    }
    expect(refused).not.toBeNull();
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true);
    expect(statuses.length - 1).toBeGreaterThanOrEqual(3);
    expect(refused!.headers.get('content-type')).toContain('application/problem+json');
    expect(refused!.body).toMatchObject({ status: 429, title: 'Too many requests', detail: expect.stringMatching(/^too many failed API key lookups from \S+ in a minute; retry in \d+ s$/) });
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await stack.request('GET', '/health', { key: null })).status).toBe(200);
  }, 30_000);
});

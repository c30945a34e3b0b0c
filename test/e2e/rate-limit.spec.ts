import { TestStack } from '../support/stack';

/** Per-API-key limits with the RateLimit header fields, and a 429 problem with Retry-After. */
describe('rate limits (real HTTP and Redis)', () => {
  const stack = new TestStack({ apiEnv: { STARLAB_RATE_LIMIT_PER_MINUTE: '5' } });
  let otherKey: string;

  beforeAll(async () => {
    await stack.start();
    otherKey = (await stack.request('POST', '/v1/users', { body: { name: 'other' } })).body.apiKey.key;
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('counts requests per key per minute and refuses the excess with 429', async () => {
    const remaining: number[] = [];
    let last!: Awaited<ReturnType<TestStack['request']>>;
    for (let i = 0; i < 7 && last?.status !== 429; i++) {
      last = await stack.request('GET', '/v1/environments');
      if (last.status !== 200) break;
      expect(last.headers.get('ratelimit-limit')).toBe('5');
      expect(last.headers.get('ratelimit-policy')).toBe('5;w=60');
      remaining.push(Number(last.headers.get('ratelimit-remaining')));
    }
    // Each request spends one unit until none is left, then the next is refused.
    expect(remaining[remaining.length - 1]).toBe(0);
    expect(remaining).toEqual(remaining.map((_, i) => remaining[0] - i));
    expect(last.status).toBe(429);
    expect(last.headers.get('content-type')).toContain('application/problem+json');
    expect(last.body).toMatchObject({ status: 429, title: 'Too many requests', detail: expect.stringContaining('more than 5 requests in a minute') });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another key has its own budget; operations endpoints need no key and are not limited.
    expect((await stack.request('GET', '/v1/environments', { key: otherKey })).status).toBe(200);
    expect((await stack.request('GET', '/health', { key: null })).status).toBe(200);
  });
});

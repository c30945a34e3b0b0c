import { TestStack, tinyJob } from '../support/stack';

/** Every kind of bad request gets the right 4xx problem document, and nothing breaks or is lost. */
describe('bad input (real HTTP)', () => {
  const stack = new TestStack();
  let memberKey: string;
  let revokedKey: string;
  let adminJobId: string;

  beforeAll(async () => {
    await stack.start();
    const member = await stack.request('POST', '/v1/users', { body: { name: 'mia', team: 'vision' } });
    expect(member.status).toBe(201);
    memberKey = member.body.apiKey.key;
    const revoked = await stack.request('POST', '/v1/users', { body: { name: 'rex' } });
    revokedKey = revoked.body.apiKey.key;
    await stack.prisma.apiKey.update({ where: { id: revoked.body.apiKey.id }, data: { revokedAt: new Date() } });
    adminJobId = (await stack.request('POST', '/v1/jobs', { body: tinyJob() })).body.id;
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  const valid = tinyJob();
  const cases: { name: string; method?: string; path?: string; key?: 'member' | 'revoked' | 'none' | 'wrong'; raw?: string; body?: unknown; contentType?: string; status: number; type: string; fields?: string[] }[] = [
    { name: 'malformed JSON', raw: '{"environment": {"id": "bandit"', status: 400, type: 'malformed-json' },
    { name: 'a JSON array', body: [valid], status: 400, type: 'invalid-request', fields: ['(body)'] },
    { name: 'wrong types', body: { ...valid, training: { steps: 'many', seed: 1.5 } }, status: 400, type: 'invalid-request', fields: ['training.steps', 'training.seed'] },
    { name: 'an unknown field', body: { ...valid, gpus: 8 }, status: 400, type: 'invalid-request', fields: ['gpus'] },
    { name: 'an unknown nested field', body: { ...valid, rollout: { groups: 2, gruops: 3 } }, status: 400, type: 'invalid-request', fields: ['rollout.gruops'] },
    { name: 'out-of-bound numbers', body: { ...valid, training: { steps: 1e7 }, model: { config: { layers: 64 } } }, status: 400, type: 'invalid-request', fields: ['training.steps', 'model.config.layers'] },
    { name: 'a batch too large for one step', body: { ...valid, rollout: { ...valid.rollout, groups: 64, groupSize: 8 } }, status: 400, type: 'invalid-request', fields: ['rollout.groupSize'] },
    { name: 'an unknown environment', body: { ...valid, environment: { id: 'chess' } }, status: 400, type: 'invalid-request', fields: ['environment.id'] },
    { name: 'an unknown algorithm', body: { ...valid, algorithm: { id: 'reinforce' } }, status: 400, type: 'invalid-request', fields: ['algorithm.id'] },
    { name: 'a bad environment config', body: { ...valid, environment: { id: 'frozenlake', config: { size: 50 } } }, status: 400, type: 'invalid-request', fields: ['environment.config.size'] },
    { name: 'an oversize body', raw: JSON.stringify({ ...valid, labels: { big: 'x'.repeat(100_000) } }), status: 413, type: 'payload-too-large' },
    { name: 'a non-JSON body', raw: 'environment=bandit', contentType: 'text/plain', status: 415, type: 'unsupported-media-type' },
    { name: 'no API key', key: 'none', status: 401, type: 'unauthenticated' },
    { name: 'a wrong API key', key: 'wrong', status: 401, type: 'unauthenticated' },
    { name: 'a revoked API key', key: 'revoked', status: 401, type: 'unauthenticated' },
    { name: 'an unknown route', method: 'GET', path: '/v1/jobz', status: 404, type: 'not-found' },
    { name: 'a method a route does not have', method: 'DELETE', path: '/v1/queue', status: 404, type: 'not-found' },
    { name: 'an unknown job id', method: 'GET', path: '/v1/jobs/6f1c1f8e-0000-4000-8000-000000000000', status: 404, type: 'not-found' },
    { name: 'a malformed job id', method: 'GET', path: '/v1/jobs/not-a-uuid', status: 404, type: 'not-found' },
    { name: 'another user’s job', method: 'GET', path: 'ADMIN_JOB', key: 'member', status: 404, type: 'not-found' },
    { name: 'cancelling another user’s job', method: 'POST', path: 'ADMIN_JOB/cancel', key: 'member', status: 404, type: 'not-found' },
    { name: 'a bad query parameter', method: 'GET', path: '/v1/jobs?limit=0&status=done', status: 400, type: 'invalid-request', fields: ['query.limit', 'query.status'] },
    { name: 'an unknown query parameter', method: 'GET', path: '/v1/jobs?colour=red', status: 400, type: 'invalid-request', fields: ['query.colour'] },
    { name: 'a forged cursor', method: 'GET', path: '/v1/jobs?after=bm9wZQ', status: 400, type: 'invalid-request', fields: ['query.after'] },
    { name: 'a member creating users', method: 'POST', path: '/v1/users', key: 'member', body: { name: 'eve' }, status: 403, type: 'forbidden' },
    { name: 'an unknown user field', method: 'POST', path: '/v1/users', body: { name: 'eve', admin: true }, status: 400, type: 'invalid-request', fields: ['body.admin'] },
    { name: 'a webhook to loopback', method: 'POST', path: '/v1/webhooks', body: { url: 'http://127.0.0.1:3000/v1/users' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook to a name that is loopback', method: 'POST', path: '/v1/webhooks', body: { url: 'http://localhost:5432/' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook to the cloud metadata service', method: 'POST', path: '/v1/webhooks', body: { url: 'http://169.254.169.254/latest/meta-data/iam/' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook to a private network', method: 'POST', path: '/v1/webhooks', key: 'member', body: { url: 'https://[fd12:3456::1]/hook' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
  ];

  /** Every problem answered above, by type: one kind of error has one type, one title and one status. */
  const seen = new Map<string, Set<string>>();

  it.each(cases)('rejects $name with $status', async (c) => {
    const key = { member: memberKey, revoked: revokedKey, none: null, wrong: 'sl_wrong', undefined: undefined }[c.key ?? 'undefined'];
    const path = (c.path ?? '/v1/jobs').replace('ADMIN_JOB', `/v1/jobs/${adminJobId}`);
    const response = await stack.request(c.method ?? 'POST', path, {
      key,
      body: c.body ?? (c.raw === undefined && (c.method ?? 'POST') === 'POST' ? valid : undefined),
      raw: c.raw,
      headers: c.contentType ? { 'Content-Type': c.contentType } : {},
    });
    expect(response.status).toBe(c.status);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body).toMatchObject({ status: c.status, type: `https://starlab.dev/problems/${c.type}`, title: expect.any(String), detail: expect.any(String) });
    if (c.fields) expect(response.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([...c.fields].sort());
    expect(response.text).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/); // no stack traces
    seen.set(response.body.type, (seen.get(response.body.type) ?? new Set()).add(`${response.body.status} ${response.body.title}`));
  });

  it('gives each kind of error one problem type, with one title and status', () => {
    expect(seen.size).toBe(7); // the kinds this table exercises
    for (const [type, variants] of seen) expect([type, [...variants]]).toEqual([type, [expect.any(String)]]);
    expect([...seen.get('https://starlab.dev/problems/not-found')!]).toEqual(['404 Not found']);
    expect([...seen.get('https://starlab.dev/problems/invalid-request')!]).toEqual(['400 Invalid request']);
  });

  it('keeps serving and loses nothing after all of that', async () => {
    expect((await stack.request('GET', '/health', { key: null })).status).toBe(200);
    const ready = await stack.request('GET', '/ready', { key: null });
    expect(ready.body).toEqual({ status: 'ready', database: 'up', redis: 'up' });
    const submitted = await stack.request('POST', '/v1/jobs', { body: tinyJob({ name: 'after-the-storm' }) });
    expect(submitted.status).toBe(201);
    const listed = await stack.request('GET', '/v1/jobs?limit=100');
    expect(listed.body.data.map((j: { name: string }) => j.name).sort()).toEqual(['after-the-storm', 'tiny-bandit']);
    const mine = await stack.request('GET', '/v1/jobs', { key: memberKey });
    expect(mine.body.data).toEqual([]);
  });
});

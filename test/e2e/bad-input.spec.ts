import { connect } from 'node:net';
import { TestStack, tinyJob } from '../support/stack';

/** `{"a": {"a": … {}}}`, `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

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
  const cases: { name: string; method?: string; path?: string; key?: 'member' | 'revoked' | 'none' | 'wrong'; raw?: string; body?: unknown; contentType?: string; headers?: Record<string, string>; status: number; type: string; fields?: string[] }[] = [
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
    { name: 'a webhook to a link-local address with a zone', method: 'POST', path: '/v1/webhooks', body: { url: 'http://[fe80::1%25lo]/' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook to a loopback name with a trailing dot', method: 'POST', path: '/v1/webhooks', body: { url: 'http://localhost./' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook to a name under localhost', method: 'POST', path: '/v1/webhooks', body: { url: 'http://LOCALHOST.:8080/' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    { name: 'a webhook URL with NUL', method: 'POST', path: '/v1/webhooks', body: { url: 'https://example.com/\u0000' }, status: 400, type: 'invalid-request', fields: ['body.url'] },
    // Strings Postgres cannot store, anywhere in a body, a query or a path.
    { name: 'NUL in a label', body: { ...valid, labels: { team: 'a\u0000b' } }, status: 400, type: 'invalid-request', fields: ['body.labels.team'] },
    { name: 'NUL in a label’s name', body: { ...valid, labels: { 'te\u0000am': 'a' } }, status: 400, type: 'invalid-request', fields: ['body.labels.te\\u0000am'] },
    { name: 'a lone surrogate in a spec string', body: { ...valid, name: 'run-\ud800' }, status: 400, type: 'invalid-request', fields: ['body.name'] },
    { name: 'a lone surrogate in a nested spec string', body: { ...valid, environment: { id: 'bandit', config: { arms: ['\udfff'] } } }, status: 400, type: 'invalid-request', fields: ['body.environment.config.arms.0'] },
    { name: 'NUL in an API key’s name', method: 'POST', path: '/v1/api-keys', body: { name: 'lap\u0000top' }, status: 400, type: 'invalid-request', fields: ['body.name'] },
    { name: 'NUL in a user’s name', method: 'POST', path: '/v1/users', body: { name: 'eve\u0000' }, status: 400, type: 'invalid-request', fields: ['body.name'] },
    { name: 'NUL in a query parameter', method: 'GET', path: '/v1/jobs?label=team%3Da%00b', status: 400, type: 'invalid-request', fields: ['query.label'] },
    { name: 'NUL in a path parameter', method: 'GET', path: '/v1/users/eve%00', status: 400, type: 'invalid-request', fields: ['path.id'] },
    // Nesting past the stated depth (32), at any depth: 2,000 levels (12 KB) inside a spec, and a bare array of 5,000.
    { name: 'a spec nested 2,000 levels deep', body: { ...valid, algorithm: { id: 'starpo-s', config: nested(2000) } }, status: 400, type: 'invalid-request', fields: [`body.algorithm.config${'.a'.repeat(30)}`] },
    { name: 'a body of arrays nested 5,000 deep', raw: `${'['.repeat(5000)}${']'.repeat(5000)}`, status: 400, type: 'invalid-request', fields: [`body${'.0'.repeat(32)}`] },
    // Integer query parameters are plain decimal integers within bounds.
    { name: 'an integer in exponent notation', method: 'GET', path: '/v1/jobs?limit=1e9', status: 400, type: 'invalid-request', fields: ['query.limit'] },
    { name: 'an integer in hexadecimal', method: 'GET', path: '/v1/jobs?limit=0x10', status: 400, type: 'invalid-request', fields: ['query.limit'] },
    { name: 'a fraction for an integer', method: 'GET', path: 'ADMIN_JOB/trajectories?step=3.5', status: 400, type: 'invalid-request', fields: ['query.step'] },
    { name: 'an integer past every float', method: 'GET', path: 'ADMIN_JOB/trajectories?step=1e309', status: 400, type: 'invalid-request', fields: ['query.step'] },
    { name: 'a parameter given twice', method: 'GET', path: '/v1/jobs?limit=5&limit=6', status: 400, type: 'invalid-request', fields: ['query.limit'] },
    { name: 'an event cursor out of range', method: 'GET', path: 'ADMIN_JOB/events?after=99999999999999999999', status: 400, type: 'invalid-request', fields: ['query.after'] },
    { name: 'a trajectory cursor out of range', method: 'GET', path: 'ADMIN_JOB/trajectories?after=9999999999999999999', status: 400, type: 'invalid-request', fields: ['query.after'] },
    { name: 'an Idempotency-Key over its length', headers: { 'Idempotency-Key': 'k'.repeat(256) }, status: 400, type: 'invalid-request', fields: ['header.Idempotency-Key'] },
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
      headers: { ...(c.contentType ? { 'Content-Type': c.contentType } : {}), ...c.headers },
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

  /** Sends `head` as the raw start of an HTTP request (what fetch refuses to send) and returns the answer. */
  async function raw(head: string): Promise<{ status: number; contentType: string; body: any }> {
    const { port } = new URL(stack.baseUrl);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    const [headers, body] = text.split('\r\n\r\n');
    return { status: Number(headers.split(' ')[1]), contentType: /content-type: ([^\r]+)/i.exec(headers)?.[1] ?? '', body: JSON.parse(body) };
  }

  it.each([
    ['a control byte', 'abc\x01def'],
    ['more bytes than any header may have', 'k'.repeat(20_000)],
  ])('names an Idempotency-Key with %s in a 400 problem, though Node refuses the request before the API sees it', async (_what, key) => {
    const answer = await raw(`POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.adminKey}\r\nIdempotency-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    expect(answer.status).toBe(400);
    expect(answer.contentType).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ type: 'https://starlab.dev/problems/invalid-request', status: 400, instance: '/v1/jobs', errors: [{ field: 'header.Idempotency-Key', message: 'must be 1–255 visible ASCII characters' }] });
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

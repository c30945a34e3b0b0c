import { ContractValidator } from '../support/contract';

/** The judge of the served-contract suite can fail: each kind of mismatch it must catch. */
describe('ContractValidator', () => {
  const contract = new ContractValidator();
  const job = { id: '6f1c2b9e-8d3a-4e5f-9a7b-1c2d3e4f5a6b' };
  const check = (method: string, url: string, status: number, headers: Record<string, string>, body: unknown) =>
    contract.check({ method, url, status, headers: new Headers(headers), text: typeof body === 'string' ? body : JSON.stringify(body) });
  const problem = { type: 'https://starlab.dev/problems/not-found', title: 'Not found', status: 404, detail: 'job x does not exist' };
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const problemJson = { 'content-type': 'application/problem+json; charset=utf-8' };

  it('accepts a declared status, content type, body and header', () => {
    expect(check('GET', `/v1/jobs/${job.id}`, 404, { ...problemJson, 'ratelimit-limit': '120' }, problem)).toEqual([]);
  });

  it('names an undocumented route, an undeclared status and an undeclared content type', () => {
    expect(check('GET', '/v1/nothing', 200, json, {})).toEqual(['GET /v1/nothing → 200: no operation in the document']);
    expect(check('GET', `/v1/jobs/${job.id}`, 418, problemJson, problem)[0]).toMatch(/status 418 not declared for getJob/);
    expect(check('GET', `/v1/jobs/${job.id}`, 404, { 'content-type': 'text/html' }, '<p>')[0]).toMatch(/content type 'text\/html' not declared/);
  });

  it('names a body that does not match its schema, and a body where none is declared', () => {
    expect(check('GET', `/v1/jobs/${job.id}`, 404, problemJson, { ...problem, status: '404' })[0]).toMatch(/body \/status must be integer/);
    expect(check('DELETE', `/v1/webhooks/${job.id}`, 204, {}, 'x')[0]).toMatch(/a body where none is declared/);
  });

  it('names a required header missing, a header of the wrong type, and an announced header not declared', () => {
    expect(check('POST', '/v1/jobs', 429, problemJson, { ...problem, status: 429, title: 'Too many requests' })[0]).toMatch(/required header Retry-After missing/);
    expect(check('GET', `/v1/jobs/${job.id}`, 404, { ...problemJson, 'ratelimit-remaining': 'many' }, problem)[0]).toMatch(/header RateLimit-Remaining: \(root\) must be integer/);
    expect(check('GET', '/health', 200, { ...json, 'retry-after': '3' }, { status: 'ok' })[0]).toMatch(/header retry-after sent but not declared/);
  });
});

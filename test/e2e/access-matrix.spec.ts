import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { TestStack, tinyJob } from '../support/stack';

/**
 * Every operation of openapi.yaml × every kind of caller → the status it gets, through real
 * HTTP. An operation missing from RULES fails the first test: a new endpoint needs a rule here.
 *
 * Callers, and whose resources they are pointed at:
 *   anonymous     no API key                                      → olive's resources
 *   owner         olive, member of team "shared" (shareJobs on)   → her own resources
 *   mateShared    sam, olive's team-mate in "shared"              → olive's resources
 *   mateUnshared  nia, team-mate of pat in "private" (sharing off)→ pat's resources
 *   other         otto, a member in no team                       → olive's resources
 *   admin         the bootstrap admin                             → olive's resources
 * Operations that change or remove a resource give the owner and the admin each their own
 * (a job, a webhook, an API key; for admin-only user and team changes, a spare user and team),
 * so that one caller's success does not change what the next one sees.
 *
 * Rules (ok = the operation's success status):
 *                 anonymous  owner  mateShared  mateUnshared  other  admin
 *   public        ok         ok     ok          ok            ok     ok     operations; no key needed
 *   anyKey        401        ok     ok          ok            ok     ok     acts on the caller's own data
 *   jobRead       401        ok     ok          404           404    ok     a job and what it produced
 *   jobControl    401        ok     404         404           404    ok     team-mates never control
 *   jobAdmin      401        403    403         404           404    ok     preempt: admins only; 403 to whoever can read the job
 *   ownerOrAdmin  401        ok     404         404           404    ok     webhooks, API keys, user profiles
 *   adminOnly     401        403    403         403           403    ok     the role is checked before any lookup
 * Another user's resource is a 404, never a 403, so that its existence is not disclosed.
 */

const CALLERS = ['anonymous', 'owner', 'mateShared', 'mateUnshared', 'other', 'admin'] as const;
type Caller = (typeof CALLERS)[number];
type RuleName = 'public' | 'anyKey' | 'jobRead' | 'jobControl' | 'jobAdmin' | 'ownerOrAdmin' | 'adminOnly';
type Expected = 'ok' | 401 | 403 | 404;

const ACCESS: Record<RuleName, Record<Caller, Expected>> = {
  public: { anonymous: 'ok', owner: 'ok', mateShared: 'ok', mateUnshared: 'ok', other: 'ok', admin: 'ok' },
  anyKey: { anonymous: 401, owner: 'ok', mateShared: 'ok', mateUnshared: 'ok', other: 'ok', admin: 'ok' },
  jobRead: { anonymous: 401, owner: 'ok', mateShared: 'ok', mateUnshared: 404, other: 404, admin: 'ok' },
  jobControl: { anonymous: 401, owner: 'ok', mateShared: 404, mateUnshared: 404, other: 404, admin: 'ok' },
  jobAdmin: { anonymous: 401, owner: 403, mateShared: 403, mateUnshared: 404, other: 404, admin: 'ok' },
  ownerOrAdmin: { anonymous: 401, owner: 'ok', mateShared: 404, mateUnshared: 404, other: 404, admin: 'ok' },
  adminOnly: { anonymous: 401, owner: 403, mateShared: 403, mateUnshared: 403, other: 403, admin: 'ok' },
};

/** What `{id}` stands for in a path. */
type Target = 'environment' | 'job' | 'controlJob' | 'checkpoint' | 'evaluation' | 'webhook' | 'apiKey' | 'user' | 'team' | 'experiment' | 'controlExperiment';

interface Rule {
  op: string;
  rule: RuleName;
  ok: number;
  target?: Target;
  body?: unknown;
}

/** The table, in the order it runs (pause before resume before cancel; deletes last). */
const RULES: Rule[] = [
  { op: 'GET /health', rule: 'public', ok: 200 },
  { op: 'GET /ready', rule: 'public', ok: 200 },
  { op: 'GET /metrics', rule: 'public', ok: 200 },
  { op: 'GET /openapi.yaml', rule: 'public', ok: 200 },
  { op: 'GET /docs', rule: 'public', ok: 200 },

  { op: 'GET /v1/environments', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/environments/{id}', rule: 'anyKey', ok: 200, target: 'environment' },
  // The role is checked before the server is contacted: the admin gets past access to the id's clash (400).
  { op: 'POST /v1/environments', rule: 'adminOnly', ok: 400, body: { id: 'frozenlake', url: 'http://127.0.0.1:9' } },
  // A built-in cannot be removed: the admin gets past access to "no such registration" (404).
  { op: 'DELETE /v1/environments/{id}', rule: 'adminOnly', ok: 404, target: 'environment' },
  { op: 'GET /v1/algorithms', rule: 'anyKey', ok: 200 },
  { op: 'POST /v1/jobs', rule: 'anyKey', ok: 201, body: tinyJob({ name: 'matrix' }) },
  { op: 'GET /v1/jobs', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/queue', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/usage', rule: 'anyKey', ok: 200 },

  { op: 'GET /v1/jobs/{id}', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/metrics', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/events', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/stream', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/trajectories', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/checkpoints', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/warnings', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/warmup', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'POST /v1/jobs/{id}/warnings/backtest', rule: 'jobRead', ok: 200, target: 'job', body: { rules: [] } },
  { op: 'GET /v1/checkpoints/{id}/download', rule: 'jobRead', ok: 200, target: 'checkpoint' },
  // Whoever may read a job may evaluate its checkpoints, and fork one into a job of their own.
  { op: 'POST /v1/jobs/{id}/evaluations', rule: 'jobRead', ok: 202, target: 'job', body: { episodes: 4, k: 1 } },
  { op: 'GET /v1/jobs/{id}/evaluations', rule: 'jobRead', ok: 200, target: 'job' },
  { op: 'GET /v1/jobs/{id}/evaluations/{evaluationId}', rule: 'jobRead', ok: 200, target: 'evaluation' },
  { op: 'POST /v1/jobs/{id}/fork', rule: 'jobRead', ok: 201, target: 'job', body: { overrides: { training: { steps: 10 } } } },

  { op: 'POST /v1/jobs/{id}/pause', rule: 'jobControl', ok: 200, target: 'controlJob' },
  { op: 'POST /v1/jobs/{id}/resume', rule: 'jobControl', ok: 200, target: 'controlJob' },
  { op: 'POST /v1/jobs/{id}/cancel', rule: 'jobControl', ok: 200, target: 'controlJob' },
  // The cancelled job, archived (hidden from lists), then rolled back (which brings it back).
  { op: 'DELETE /v1/jobs/{id}', rule: 'jobControl', ok: 200, target: 'controlJob' },
  // The cancelled job, back to its healthy checkpoint.
  { op: 'POST /v1/jobs/{id}/rollback', rule: 'jobControl', ok: 200, target: 'controlJob', body: {} },
  // Without a worker no job runs, so the admin gets past access to the state check: 409.
  { op: 'POST /v1/jobs/{id}/preempt', rule: 'jobAdmin', ok: 409, target: 'controlJob' },

  { op: 'POST /v1/experiments', rule: 'anyKey', ok: 201, body: { name: 'matrix', base: tinyJob(), grid: { 'training.seed': [1, 2] } } },
  { op: 'GET /v1/experiments', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/experiments/{id}', rule: 'jobRead', ok: 200, target: 'experiment' },
  { op: 'GET /v1/experiments/{id}/curves', rule: 'jobRead', ok: 200, target: 'experiment' },
  { op: 'POST /v1/experiments/{id}/pause', rule: 'jobControl', ok: 200, target: 'controlExperiment' },
  { op: 'POST /v1/experiments/{id}/resume', rule: 'jobControl', ok: 200, target: 'controlExperiment' },
  { op: 'POST /v1/experiments/{id}/cancel', rule: 'jobControl', ok: 200, target: 'controlExperiment' },
  { op: 'DELETE /v1/experiments/{id}', rule: 'jobControl', ok: 200, target: 'controlExperiment' },

  { op: 'POST /v1/webhooks', rule: 'anyKey', ok: 201, body: { url: 'http://127.0.0.1:9/matrix' } },
  { op: 'GET /v1/webhooks', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/webhooks/{id}/deliveries', rule: 'ownerOrAdmin', ok: 200, target: 'webhook' },
  { op: 'POST /v1/webhooks/{id}/test', rule: 'ownerOrAdmin', ok: 200, target: 'webhook' },
  { op: 'DELETE /v1/webhooks/{id}', rule: 'ownerOrAdmin', ok: 204, target: 'webhook' },

  { op: 'POST /v1/api-keys', rule: 'anyKey', ok: 201, body: { name: 'matrix' } },
  { op: 'GET /v1/api-keys', rule: 'anyKey', ok: 200 },
  { op: 'DELETE /v1/api-keys/{id}', rule: 'ownerOrAdmin', ok: 204, target: 'apiKey' },

  { op: 'GET /v1/users/me', rule: 'anyKey', ok: 200 },
  { op: 'GET /v1/users', rule: 'adminOnly', ok: 200 },
  { op: 'POST /v1/users', rule: 'adminOnly', ok: 201, body: { name: 'made-by-matrix' } },
  { op: 'GET /v1/users/{id}', rule: 'ownerOrAdmin', ok: 200, target: 'user' },
  { op: 'PATCH /v1/users/{id}', rule: 'adminOnly', ok: 200, target: 'user', body: { maxQueuedJobs: 5 } },
  { op: 'POST /v1/users/{id}/disable', rule: 'adminOnly', ok: 200, target: 'user' },
  { op: 'POST /v1/users/{id}/enable', rule: 'adminOnly', ok: 200, target: 'user' },

  { op: 'GET /v1/teams', rule: 'anyKey', ok: 200 },
  { op: 'POST /v1/teams', rule: 'adminOnly', ok: 201, body: { name: 'made-by-matrix' } },
  { op: 'PATCH /v1/teams/{id}', rule: 'adminOnly', ok: 200, target: 'team', body: { shareJobs: true } },

  { op: 'GET /v1/audit', rule: 'adminOnly', ok: 200 },
];

/** Served outside the OpenAPI document (Swagger UI itself). */
const NOT_IN_OPENAPI = new Set(['GET /docs']);

function documentedOperations(): string[] {
  const document = parse(readFileSync(join(__dirname, '..', '..', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}

type Resources = Record<Target, string>;

describe('access matrix (real HTTP)', () => {
  // Webhooks point at loopback (nothing listens there), which an admin must allow.
  const stack = new TestStack({ apiEnv: { STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1' } });
  const keys = {} as Record<Exclude<Caller, 'anonymous'>, string>;
  /** Whose resources a caller is pointed at (see the header). */
  const targets = {} as Record<Caller, Resources>;

  async function ok<T = any>(method: string, path: string, key: string, body?: unknown): Promise<T> {
    const response = await stack.request(method, path, { key, body });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  }

  /** One member's resources for the matrix. */
  async function resourcesOf(key: string, userId: string, team: string): Promise<Resources> {
    const job = (await ok('POST', '/v1/jobs', key, tinyJob({ name: 'read-me' }))).id;
    const checkpoint = await stack.prisma.checkpoint.create({ data: { jobId: job, step: 2, bytes: Buffer.from('checkpoint bytes'), sizeBytes: 16, health: 'healthy' } });
    const evaluation = await stack.prisma.evaluation.create({ data: { jobId: job, checkpointId: checkpoint.id, status: 'queued', environment: { id: 'bandit', config: {} }, episodes: 4 } });
    const experiment = (await ok('POST', '/v1/experiments', key, { name: 'read-me', base: tinyJob(), grid: { 'training.seed': [1, 2] } })).id;
    return {
      job,
      controlJob: job,
      experiment,
      controlExperiment: experiment,
      checkpoint: checkpoint.id,
      evaluation: `${job}/evaluations/${evaluation.id}`,
      webhook: (await ok('POST', '/v1/webhooks', key, { url: 'http://127.0.0.1:9/hook' })).id,
      apiKey: (await ok('POST', '/v1/api-keys', key, { name: 'spare' })).id,
      user: userId,
      team,
      environment: 'frozenlake',
    };
  }

  beforeAll(async () => {
    await stack.start();
    const admin = stack.adminKey;
    await ok('POST', '/v1/teams', admin, { name: 'shared', shareJobs: true });
    await ok('POST', '/v1/teams', admin, { name: 'private', shareJobs: false });
    const member = async (name: string, team?: string) => (await ok('POST', '/v1/users', admin, { name, team })) as { user: { id: string }; apiKey: { key: string } };
    const [olive, sam, pat, nia, otto, spare] = await Promise.all([member('olive', 'shared'), member('sam', 'shared'), member('pat', 'private'), member('nia', 'private'), member('otto'), member('spare', 'shared')]);
    Object.assign(keys, { owner: olive.apiKey.key, mateShared: sam.apiKey.key, mateUnshared: nia.apiKey.key, other: otto.apiKey.key, admin });

    const olives = await resourcesOf(olive.apiKey.key, olive.user.id, 'shared');
    const pats = await resourcesOf(pat.apiKey.key, pat.user.id, 'private');
    // What the owner and the admin change or remove is theirs alone.
    const ownersOwn = await resourcesOf(olive.apiKey.key, olive.user.id, 'shared');
    const forAdmin = await resourcesOf(olive.apiKey.key, spare.user.id, (await ok('POST', '/v1/teams', admin, { name: 'spare' })).id);
    targets.anonymous = olives;
    targets.owner = { ...olives, controlJob: ownersOwn.job, controlExperiment: ownersOwn.experiment, webhook: ownersOwn.webhook, apiKey: ownersOwn.apiKey };
    targets.mateShared = olives;
    targets.mateUnshared = pats;
    targets.other = olives;
    targets.admin = { ...olives, controlJob: forAdmin.job, controlExperiment: forAdmin.experiment, webhook: forAdmin.webhook, apiKey: forAdmin.apiKey, user: forAdmin.user, team: forAdmin.team };
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('has a rule for every operation of openapi.yaml, and none for operations that do not exist', () => {
    const documented = documentedOperations();
    const ruled = RULES.map((r) => r.op).filter((op) => !NOT_IN_OPENAPI.has(op));
    expect({ withoutRule: documented.filter((op) => !ruled.includes(op)), withoutOperation: ruled.filter((op) => !documented.includes(op)) }).toEqual({ withoutRule: [], withoutOperation: [] });
    expect(new Set(ruled).size).toBe(ruled.length);
  });

  it.each(RULES)('$op: $rule', async ({ op, rule, ok: success, target, body }) => {
    const [method, template] = op.split(' ');
    const expected: Record<string, number> = {};
    const actual: Record<string, number> = {};
    const notProblems: string[] = [];
    for (const caller of CALLERS) {
      const path = target ? template.replace(target === 'evaluation' ? '{id}/evaluations/{evaluationId}' : '{id}', targets[caller][target]) : template;
      const allowed = ACCESS[rule][caller];
      expected[caller] = allowed === 'ok' ? success : allowed;
      const response = await call(stack.baseUrl, method, path, caller === 'anonymous' ? null : keys[caller], body);
      actual[caller] = response.status;
      if (response.status >= 400 && !response.contentType.includes('application/problem+json')) notProblems.push(`${caller}: ${response.contentType}`);
    }
    expect(actual).toEqual(expected);
    expect(notProblems).toEqual([]);
  });
});

/** Status and content type only; an event stream is let go once its headers have arrived. */
async function call(baseUrl: string, method: string, path: string, key: string | null, body: unknown): Promise<{ status: number; contentType: string }> {
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const contentType = response.headers.get('content-type') ?? '';
  if (contentType.startsWith('text/event-stream')) await response.body?.cancel();
  else await response.arrayBuffer();
  return { status: response.status, contentType };
}

import { Logger } from '@nestjs/common';
import { TestStack, tinyJob } from '../support/stack';

interface AuditEvent {
  id: string;
  createdAt: string;
  actorId: string | null;
  actorName: string;
  action: string;
  targetType: string;
  targetId: string;
  message: string;
  data: Record<string, unknown>;
}

/**
 * Users, teams and API keys through real HTTP: who may manage whom, what each change does at
 * once, and the audit event (GET /v1/audit) and `audit:` log line each change leaves.
 */
describe('identity (real HTTP)', () => {
  const stack = new TestStack();
  const audit = jest.spyOn(Logger.prototype, 'log');
  const loggedAudits = () => audit.mock.calls.map(([message]) => String(message)).filter((message) => message.startsWith('audit: '));

  /** The audit log as the admin reads it (newest first), one page. */
  async function auditEvents(query: Record<string, string | number> = {}): Promise<AuditEvent[]> {
    const response = await stack.request('GET', `/v1/audit?${new URLSearchParams(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])))}`);
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** Each event of the log is also logged, as the same sentence. */
  function expectLogged(events: AuditEvent[]): void {
    for (const event of events) expect(loggedAudits()).toContain(`audit: ${event.message}`);
  }

  /** Creates a member (or admin) through the API; returns its id and first key. */
  async function createUser(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
    const created = await stack.request('POST', '/v1/users', { body });
    expect(created.status).toBe(201);
    return { id: created.body.user.id, key: created.body.apiKey.key };
  }

  const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field).sort();

  beforeAll(() => stack.start(), 60_000);
  afterAll(() => stack.stop(), 30_000);

  describe('API keys', () => {
    it('are created, work, are listed by prefix with their last use, and stop working once revoked', async () => {
      const ada = await createUser({ name: 'ada' });
      const issued = await stack.request('POST', '/v1/api-keys', { key: ada.key, body: { name: 'laptop' } });
      expect(issued.status).toBe(201);
      expect(issued.body).toEqual({ id: expect.any(String), name: 'laptop', prefix: issued.body.key.slice(0, 11), key: expect.stringMatching(/^sl_[A-Za-z0-9_-]{32}$/), createdAt: expect.any(String) });
      const laptop = issued.body;

      const before = await stack.request('GET', '/v1/api-keys', { key: ada.key });
      expect(before.body.data.find((k: { id: string }) => k.id === laptop.id).lastUsedAt).toBeNull();

      const me = await stack.request('GET', '/v1/users/me', { key: laptop.key });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ id: ada.id, name: 'ada', role: 'member' });

      const listed = await stack.request('GET', '/v1/api-keys', { key: ada.key });
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((k: { name: string }) => k.name)).toEqual(['first key', 'laptop']);
      for (const key of listed.body.data) {
        expect(Object.keys(key).sort()).toEqual(['createdAt', 'current', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'userId']);
        expect(key.prefix).toHaveLength(11);
        expect(listed.text).not.toContain(laptop.key);
      }
      const [first, second] = listed.body.data;
      expect(first).toMatchObject({ current: true, userId: ada.id, revokedAt: null, lastUsedAt: expect.any(String) });
      expect(second).toMatchObject({ id: laptop.id, prefix: laptop.prefix, current: false, revokedAt: null });
      expect(Date.parse(second.lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(laptop.createdAt));

      expect((await stack.request('DELETE', `/v1/api-keys/${laptop.id}`, { key: ada.key })).status).toBe(204);
      const refused = await stack.request('GET', '/v1/users/me', { key: laptop.key });
      expect(refused.status).toBe(401);
      expect(refused.body.type).toBe('https://starlab.dev/problems/unauthenticated');
      const afterRevoke = await stack.request('GET', '/v1/api-keys', { key: ada.key });
      const revokedAt = afterRevoke.body.data[1].revokedAt;
      expect(revokedAt).toEqual(expect.any(String));

      // Idempotent: the first revocation time stays.
      expect((await stack.request('DELETE', `/v1/api-keys/${laptop.id}`, { key: ada.key })).status).toBe(204);
      expect((await stack.request('GET', '/v1/api-keys', { key: ada.key })).body.data[1].revokedAt).toBe(revokedAt);

      // A key can revoke itself; the very next request with it is refused.
      expect((await stack.request('DELETE', `/v1/api-keys/${first.id}`, { key: ada.key })).status).toBe(204);
      expect((await stack.request('GET', '/v1/api-keys', { key: ada.key })).status).toBe(401);

      // A member's own key changes are audited too, once each (the repeated revocation changed nothing).
      const laptopEvents = await auditEvents({ targetId: laptop.id });
      expect(laptopEvents.map((e) => [e.action, e.actorId, e.actorName, e.targetType])).toEqual([
        ['api_key.revoke', ada.id, 'ada', 'api_key'],
        ['api_key.issue', ada.id, 'ada', 'api_key'],
      ]);
      expect(laptopEvents[1]).toMatchObject({ message: `ada (${ada.id}) issued API key ${laptop.id} (${laptop.prefix}…) for user ${ada.id}`, data: { userId: ada.id, name: 'laptop', prefix: laptop.prefix } });
      expect(laptopEvents[0].data).toEqual({ userId: ada.id, name: 'laptop', prefix: laptop.prefix, revokedAt });
      expect(JSON.stringify(laptopEvents)).not.toContain(laptop.key);
      expectLogged(laptopEvents);
    });

    it('are another member’s business only as a 404; admins list, issue and revoke anyone’s', async () => {
      const bo = await createUser({ name: 'bo' });
      const cy = await createUser({ name: 'cy' });
      const boKeys = (await stack.request('GET', '/v1/api-keys', { key: bo.key })).body.data;

      expect((await stack.request('DELETE', `/v1/api-keys/${boKeys[0].id}`, { key: cy.key })).status).toBe(404);
      expect((await stack.request('GET', '/v1/api-keys?user=bo', { key: cy.key })).status).toBe(404);
      expect((await stack.request('POST', '/v1/api-keys', { key: cy.key, body: { name: 'sneaky', user: 'bo' } })).status).toBe(404);
      expect((await stack.request('GET', '/v1/api-keys?user=cy', { key: cy.key })).status).toBe(200);
      expect((await stack.request('DELETE', '/v1/api-keys/not-a-uuid', { key: cy.key })).status).toBe(404);

      const forBo = await stack.request('POST', '/v1/api-keys', { body: { name: 'rotated by admin', user: bo.id } });
      expect(forBo.status).toBe(201);
      expect((await stack.request('GET', '/v1/users/me', { key: forBo.body.key })).body.name).toBe('bo');
      const listedByAdmin = await stack.request('GET', `/v1/api-keys?user=bo`);
      expect(listedByAdmin.body.data.map((k: { name: string; current: boolean }) => [k.name, k.current])).toEqual([
        ['first key', false],
        ['rotated by admin', false],
      ]);
      expect((await stack.request('DELETE', `/v1/api-keys/${boKeys[0].id}`)).status).toBe(204);
      expect((await stack.request('GET', '/v1/users/me', { key: bo.key })).status).toBe(401);
      expect((await stack.request('GET', '/v1/users/me', { key: forBo.body.key })).status).toBe(200);
      expect(audit.mock.calls.map(([message]) => String(message))).toContainEqual(expect.stringMatching(new RegExp(`^audit: admin \\([0-9a-f-]{36}\\) revoked API key ${boKeys[0].id} \\(sl_`)));

      const admin = (await stack.request('GET', '/v1/users/me')).body;
      const [revoked] = await auditEvents({ targetId: boKeys[0].id, action: 'api_key.revoke' });
      expect(revoked).toEqual({
        id: expect.stringMatching(/^\d+$/),
        createdAt: expect.any(String),
        actorId: admin.id,
        actorName: 'admin',
        action: 'api_key.revoke',
        targetType: 'api_key',
        targetId: boKeys[0].id,
        message: `admin (${admin.id}) revoked API key ${boKeys[0].id} (${boKeys[0].prefix}…) of user ${bo.id}`,
        data: { userId: bo.id, name: 'first key', prefix: boKeys[0].prefix, revokedAt: expect.any(String) },
      });
      const [issued] = await auditEvents({ targetId: forBo.body.id });
      expect(issued).toMatchObject({ action: 'api_key.issue', actorId: admin.id, data: { userId: bo.id, name: 'rotated by admin' } });
      expectLogged([revoked, issued]);
    });
  });

  describe('user management', () => {
    it('lets admins list, read, change and disable users, each action logged with ids', async () => {
      const dee = await createUser({ name: 'dee', team: 'vision', maxQueuedJobs: 7 });
      const listed = await stack.request('GET', '/v1/users');
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((u: { name: string }) => u.name)).toEqual(expect.arrayContaining(['admin', 'dee']));

      const byName = await stack.request('GET', '/v1/users/dee');
      expect(byName.body).toEqual({
        id: dee.id,
        name: 'dee',
        role: 'member',
        team: 'vision',
        teamId: expect.any(String),
        maxRunningJobs: null,
        maxQueuedJobs: 7,
        disabledAt: null,
        createdAt: expect.any(String),
      });
      expect((await stack.request('GET', `/v1/users/${dee.id}`)).body).toEqual(byName.body);

      const changed = await stack.request('PATCH', `/v1/users/${dee.id}`, { body: { role: 'admin', team: 'nlp', maxRunningJobs: 3, maxQueuedJobs: null } });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ role: 'admin', team: 'nlp', maxRunningJobs: 3, maxQueuedJobs: null });
      expect((await stack.request('GET', '/v1/users/me', { key: dee.key })).body.role).toBe('admin');
      const noTeam = await stack.request('PATCH', '/v1/users/dee', { body: { role: 'member', team: null } });
      expect(noTeam.body).toMatchObject({ role: 'member', team: null, teamId: null, maxRunningJobs: 3 });
      expect((await stack.request('GET', '/v1/users', { key: dee.key })).status).toBe(403);

      const messages = audit.mock.calls.map(([message]) => String(message));
      expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^audit: admin admin \\([0-9a-f-]{36}\\) updated user ${dee.id} \\(dee\\): role=admin, team=nlp, maxRunningJobs=3, maxQueuedJobs=default$`)));

      const admin = (await stack.request('GET', '/v1/users/me')).body;
      const events = await auditEvents({ targetId: dee.id });
      expect(events.map((e) => [e.action, e.actorId, e.actorName, e.targetType, e.data])).toEqual([
        ['user.update', admin.id, 'admin', 'user', { role: 'member', team: null }],
        ['user.update', admin.id, 'admin', 'user', { role: 'admin', team: 'nlp', maxRunningJobs: 3, maxQueuedJobs: null }],
        ['user.create', admin.id, 'admin', 'user', { name: 'dee', role: 'member', team: 'vision', maxRunningJobs: null, maxQueuedJobs: 7, apiKeyId: expect.any(String), apiKeyPrefix: expect.any(String) }],
      ]);
      expect(events[1].message).toBe(`admin admin (${admin.id}) updated user ${dee.id} (dee): role=admin, team=nlp, maxRunningJobs=3, maxQueuedJobs=default`);
      expect(events[2].message).toMatch(new RegExp(`^admin admin \\(${admin.id}\\) created user ${dee.id} \\(dee, member, team vision\\) with API key ${events[2].data.apiKeyId} \\(sl_`));
      expect(Number(events[0].id)).toBeGreaterThan(Number(events[1].id));
      expectLogged(events);
      expect((await stack.request('GET', '/v1/users/nobody')).status).toBe(404);
      expect((await stack.request('PATCH', '/v1/users/nobody', { body: { role: 'admin' } })).status).toBe(404);
    });

    it('refuses members: admin-only routes are 403, other users are 404, themselves are visible', async () => {
      const eve = await createUser({ name: 'eve' });
      const fay = await createUser({ name: 'fay' });
      const asEve = (method: string, path: string, body?: unknown) => stack.request(method, path, { key: eve.key, body });

      const refusals = [
        await asEve('GET', '/v1/users'),
        await asEve('POST', '/v1/users', { name: 'mallory' }),
        await asEve('PATCH', `/v1/users/${eve.id}`, { maxRunningJobs: 1000 }),
        await asEve('PATCH', `/v1/users/${fay.id}`, { role: 'admin' }),
        await asEve('POST', `/v1/users/${fay.id}/disable`),
        await asEve('POST', `/v1/users/${eve.id}/enable`),
        await asEve('POST', '/v1/teams', { name: 'eves-team' }),
        await asEve('PATCH', '/v1/teams/vision', { shareJobs: true }),
        await asEve('GET', '/v1/audit'),
        await asEve('GET', `/v1/audit?actorId=${eve.id}`),
      ];
      for (const refusal of refusals) {
        expect(refusal.status).toBe(403);
        expect(refusal.body.type).toBe('https://starlab.dev/problems/forbidden');
      }
      expect((await asEve('GET', `/v1/users/${fay.id}`)).status).toBe(404);
      expect((await asEve('GET', '/v1/users/fay')).status).toBe(404);
      expect((await asEve('GET', '/v1/users/eve')).body).toMatchObject({ id: eve.id, role: 'member' });
      expect((await stack.request('GET', '/v1/users/fay')).body).toMatchObject({ role: 'member', disabledAt: null });
      // Refused changes leave no trace in the audit log.
      expect((await auditEvents({ targetId: fay.id })).map((e) => e.action)).toEqual(['user.create']);
      expect(await auditEvents({ actorId: eve.id })).toEqual([]);
    });

    it('never leaves the service without an enabled admin', async () => {
      const lastAdmin = await stack.request('POST', '/v1/users/admin/disable');
      expect(lastAdmin.status).toBe(409);
      expect((await stack.request('PATCH', '/v1/users/admin', { body: { role: 'member' } })).status).toBe(409);
      const gus = await createUser({ name: 'gus', role: 'admin' });
      expect((await stack.request('PATCH', '/v1/users/admin', { body: { role: 'member' } })).status).toBe(200);
      expect((await stack.request('PATCH', '/v1/users/gus', { key: gus.key, body: { role: 'member' } })).status).toBe(409);
      expect((await stack.request('PATCH', '/v1/users/admin', { key: gus.key, body: { role: 'admin' } })).body.role).toBe('admin');

      // Each admin is recorded as the actor of their own changes; the refused ones left nothing.
      const byGus = await auditEvents({ actorId: gus.id });
      expect(byGus.map((e) => [e.action, e.actorName, e.data])).toEqual([['user.update', 'gus', { role: 'admin' }]]);
      const admin = (await stack.request('GET', '/v1/users/me')).body;
      expect((await auditEvents({ targetId: admin.id })).map((e) => [e.action, e.actorName, e.data])).toEqual([
        ['user.update', 'gus', { role: 'admin' }],
        ['user.update', 'admin', { role: 'member' }],
      ]);
    });

    it('disabling a user blocks all their keys at once; enabling restores the unrevoked ones', async () => {
      const hal = await createUser({ name: 'hal' });
      const second = (await stack.request('POST', '/v1/api-keys', { key: hal.key, body: { name: 'ci' } })).body;
      const revoked = (await stack.request('POST', '/v1/api-keys', { key: hal.key, body: { name: 'old' } })).body;
      expect((await stack.request('DELETE', `/v1/api-keys/${revoked.id}`, { key: hal.key })).status).toBe(204);
      const job = await stack.request('POST', '/v1/jobs', { key: hal.key, body: tinyJob({ name: 'hal-job' }) });
      expect(job.status).toBe(201);

      const disabled = await stack.request('POST', `/v1/users/${hal.id}/disable`);
      expect(disabled.status).toBe(200);
      expect(disabled.body.disabledAt).toEqual(expect.any(String));
      for (const key of [hal.key, second.key]) {
        const refused = await stack.request('GET', `/v1/jobs/${job.body.id}`, { key });
        expect(refused.status).toBe(401);
      }
      // Idempotent, keeping the first time.
      expect((await stack.request('POST', '/v1/users/hal/disable')).body.disabledAt).toBe(disabled.body.disabledAt);
      expect(audit.mock.calls.map(([message]) => String(message))).toContainEqual(expect.stringMatching(new RegExp(`^audit: admin admin \\([0-9a-f-]{36}\\) disabled user ${hal.id} \\(hal\\)$`)));

      const enabled = await stack.request('POST', `/v1/users/${hal.id}/enable`);
      expect(enabled.body.disabledAt).toBeNull();
      expect((await stack.request('GET', `/v1/jobs/${job.body.id}`, { key: second.key })).status).toBe(200);
      expect((await stack.request('GET', '/v1/users/me', { key: revoked.key })).status).toBe(401);

      // Disabled twice, recorded once (with the time that stayed).
      const events = await auditEvents({ targetId: hal.id });
      expect(events.map((e) => [e.action, e.data])).toEqual([
        ['user.enable', { disabledAt: null }],
        ['user.disable', { disabledAt: disabled.body.disabledAt }],
        ['user.create', expect.objectContaining({ name: 'hal' })],
      ]);
      expect(events[1].message).toMatch(new RegExp(`^admin admin \\([0-9a-f-]{36}\\) disabled user ${hal.id} \\(hal\\)$`));
      expectLogged(events);
    });
  });

  describe('teams', () => {
    it('let team-mates read, never control, each other’s jobs while sharing is on', async () => {
      const team = await stack.request('POST', '/v1/teams', { body: { name: 'rl' } });
      expect(team.status).toBe(201);
      expect(team.body).toEqual({ id: expect.any(String), name: 'rl', shareJobs: false, members: 0, createdAt: expect.any(String) });
      const ivy = await createUser({ name: 'ivy', team: 'rl' });
      const jon = await createUser({ name: 'jon', team: 'rl' });
      const kim = await createUser({ name: 'kim', team: 'vision' });
      const job = (await stack.request('POST', '/v1/jobs', { key: ivy.key, body: tinyJob({ name: 'ivy-job' }) })).body;
      const asJon = (method: string, path: string) => stack.request(method, path, { key: jon.key });

      expect((await asJon('GET', `/v1/jobs/${job.id}`)).status).toBe(404);
      expect((await asJon('GET', '/v1/jobs?owner=ivy')).body.data).toEqual([]);

      const shared = await stack.request('PATCH', `/v1/teams/${team.body.id}`, { body: { shareJobs: true } });
      expect(shared.body).toMatchObject({ name: 'rl', shareJobs: true, members: 2 });
      expect((await asJon('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({ id: job.id, owner: { name: 'ivy' } });
      expect((await asJon('GET', '/v1/jobs?owner=ivy')).body.data.map((j: { id: string }) => j.id)).toEqual([job.id]);
      expect((await asJon('GET', `/v1/jobs/${job.id}/events`)).status).toBe(200);
      for (const control of ['cancel', 'pause', 'resume']) expect((await asJon('POST', `/v1/jobs/${job.id}/${control}`)).status).toBe(404);
      expect((await stack.request('GET', `/v1/jobs/${job.id}`, { key: kim.key })).status).toBe(404);

      expect((await stack.request('PATCH', '/v1/teams/rl', { body: { shareJobs: false } })).body.shareJobs).toBe(false);
      expect((await asJon('GET', `/v1/jobs/${job.id}`)).status).toBe(404);
      expect((await stack.request('GET', `/v1/jobs/${job.id}`, { key: ivy.key })).body.status).toBe('queued');

      const events = await auditEvents({ targetId: team.body.id });
      expect(events.map((e) => [e.action, e.actorName, e.targetType, e.data])).toEqual([
        ['team.update', 'admin', 'team', { shareJobs: false }],
        ['team.update', 'admin', 'team', { shareJobs: true }],
        ['team.create', 'admin', 'team', { name: 'rl', shareJobs: false }],
      ]);
      expect(events[1].message).toMatch(new RegExp(`^admin admin \\([0-9a-f-]{36}\\) updated team ${team.body.id} \\(rl\\): shareJobs=true$`));
      expectLogged(events);
    });

    it('are listed in full for admins and as their own team for members', async () => {
      const all = await stack.request('GET', '/v1/teams');
      expect(all.body.data.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['rl', 'vision']));
      const lee = await createUser({ name: 'lee', team: 'rl' });
      expect((await stack.request('GET', '/v1/teams', { key: lee.key })).body.data.map((t: { name: string }) => t.name)).toEqual(['rl']);
      const loner = await createUser({ name: 'loner' });
      expect((await stack.request('GET', '/v1/teams', { key: loner.key })).body.data).toEqual([]);
      expect((await stack.request('POST', '/v1/teams', { body: { name: 'rl' } })).status).toBe(409);
      expect((await stack.request('PATCH', '/v1/teams/vision', { body: { name: 'rl' } })).status).toBe(409);
      expect((await stack.request('PATCH', '/v1/teams/nope', { body: { shareJobs: true } })).status).toBe(404);
      // The refused rename was rolled back with its audit event.
      const vision = all.body.data.find((t: { name: string }) => t.name === 'vision');
      expect(await auditEvents({ targetId: vision.id, action: 'team.update' })).toEqual([]);
      expect(await auditEvents({ action: 'team.create' })).toHaveLength(1);
    });
  });

  describe('audit log', () => {
    it('pages newest first with a cursor, and filters by action, actor, target and time', async () => {
      const all: AuditEvent[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await stack.request('GET', `/v1/audit?limit=3${after ? `&after=${after}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(3);
        all.push(...page.body.data);
        expect(page.body.next_cursor === null).toBe(!page.body.has_more);
        if (!page.body.has_more) break;
        after = page.body.next_cursor;
      }
      const ids = all.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      expect(new Set(ids).size).toBe(ids.length);
      expect(all.length).toBeGreaterThan(20);
      expect(all.map((e) => e.id)).toEqual((await auditEvents({ limit: 100 })).map((e) => e.id).slice(0, all.length));

      // The oldest: the STARLAB_ADMIN_KEY key, issued by the service itself.
      expect(all[all.length - 1]).toMatchObject({ action: 'api_key.issue', actorId: null, actorName: 'STARLAB_ADMIN_KEY', targetType: 'api_key', data: { name: 'bootstrap (STARLAB_ADMIN_KEY)' } });

      const disables = await auditEvents({ action: 'user.disable' });
      expect(disables.length).toBeGreaterThan(0);
      expect(disables.every((e) => e.action === 'user.disable')).toBe(true);
      const middle = all[Math.floor(all.length / 2)];
      const since = await auditEvents({ since: middle.createdAt, limit: 100 });
      expect(since.every((e) => Date.parse(e.createdAt) >= Date.parse(middle.createdAt))).toBe(true);
      expect(since.map((e) => e.id)).toContain(middle.id);
      expect(await auditEvents({ since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    });

    it('rejects bad filters and cursors, naming each field', async () => {
      const bad = await stack.request('GET', '/v1/audit?action=user.delete&actorId=admin&limit=0&since=yesterday');
      expect(bad.status).toBe(400);
      expect(fieldsOf(bad.body)).toEqual(['query.action', 'query.actorId', 'query.limit', 'query.since']);
      const cursor = await stack.request('GET', '/v1/audit?after=not-a-cursor');
      expect(cursor.status).toBe(400);
      expect(fieldsOf(cursor.body)).toEqual(['query.after']);
      expect(fieldsOf((await stack.request('GET', '/v1/audit?target=x')).body)).toEqual(['query.target']);
    });
  });

  describe('validation', () => {
    const cases: { name: string; method: string; path: string; body: unknown; fields: string[]; message?: RegExp }[] = [
      { name: 'quotas out of bounds and a bad role', method: 'PATCH', path: '/v1/users/admin', body: { maxRunningJobs: 0, maxQueuedJobs: 'many', role: 'boss' }, fields: ['body.maxQueuedJobs', 'body.maxRunningJobs', 'body.role'], message: /must be null or an integer in \[1, 1000\]/ },
      { name: 'an unknown user field', method: 'PATCH', path: '/v1/users/admin', body: { disabled: true }, fields: ['body.disabled'] },
      { name: 'a bad team name on a user', method: 'PATCH', path: '/v1/users/admin', body: { team: 'no spaces' }, fields: ['body.team'] },
      { name: 'a quota too large at creation', method: 'POST', path: '/v1/users', body: { name: 'max', maxQueuedJobs: 1e6 }, fields: ['body.maxQueuedJobs'], message: /<= 100000/ },
      { name: 'a key without a name', method: 'POST', path: '/v1/api-keys', body: {}, fields: ['body.name'], message: /is required/ },
      { name: 'a key with an unknown field', method: 'POST', path: '/v1/api-keys', body: { name: 'x', scopes: ['all'] }, fields: ['body.scopes'] },
      { name: 'a bad team', method: 'POST', path: '/v1/teams', body: { name: '', shareJobs: 'yes' }, fields: ['body.name', 'body.shareJobs'] },
      { name: 'an unknown team field', method: 'PATCH', path: '/v1/teams/vision', body: { members: 3 }, fields: ['body.members'] },
      { name: 'an unknown query parameter', method: 'GET', path: '/v1/api-keys?owner=x', body: undefined, fields: ['query.owner'] },
    ];

    it.each(cases)('rejects $name, naming each field', async (c) => {
      const response = await stack.request(c.method, c.path, { body: c.body });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(fieldsOf(response.body)).toEqual(c.fields);
      if (c.message) expect(response.body.detail).toMatch(c.message);
    });

    it('refuses a second user with the same name', async () => {
      await createUser({ name: 'twin' });
      const again = await stack.request('POST', '/v1/users', { body: { name: 'twin' } });
      expect(again.status).toBe(409);
    });
  });
});

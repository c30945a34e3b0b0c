import { loadConfig } from '../../src/config/config';
import { PrismaService } from '../../src/repositories/prisma.service';
import { SchedulingRepository } from '../../src/repositories/scheduling.repository';
import { DispatchService } from '../../src/services/dispatch.service';
import { createTestDatabase, TestDatabase } from '../support/database';

/**
 * The reasons GET /v1/queue and GET /v1/jobs/{id} give a waiting job, read from real rows by the
 * scheduler, checked number by number against what the database holds.
 */
describe('queue reasons (real Postgres)', () => {
  let database: TestDatabase;
  let prisma: PrismaService;
  let dispatch: DispatchService;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaService(database.url);
    await prisma.$connect();
    const config = loadConfig({ DATABASE_URL: database.url, STARLAB_QUEUE_VIEW_MS: '0' });
    dispatch = new DispatchService({} as never, {} as never, {} as never, new SchedulingRepository(prisma), {} as never, config);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  it('names the running jobs, the jobs placed before and the quota that hold a job back, and the slots that are busy, as they are', async () => {
    const now = Date.now();
    await prisma.worker.create({ data: { id: 'w1', hostname: 'h', backend: 'wasm', device: 'cpu', slots: 2, lastHeartbeatAt: new Date(now) } });
    const user = (name: string, maxRunningJobs?: number) => prisma.user.create({ data: { name, role: 'member', maxRunningJobs } });
    const [ann, bob, cy] = [await user('ann', 3), await user('bob'), await user('cy', 1)];
    let minute = 0;
    const job = async (ownerId: string, status: 'queued' | 'running') =>
      (await prisma.job.create({ data: { ownerId, name: `j${minute}`, spec: {}, status, priority: 0, labels: {}, totalSteps: 10, device: 'cpu', workerId: status === 'running' ? 'w1' : null, createdAt: new Date(now - 60_000 + minute++ * 1000) } })).id;
    // Both slots busy: ann and cy run one job each. ann has used 10 min, cy 1 min, bob 1 h (ended a minute ago).
    await job(ann.id, 'running');
    await job(cy.id, 'running');
    const usage = (userId: string, jobId: string, seconds: number, endedAgo: number | null) =>
      prisma.usageRecord.create({ data: { userId, jobId, workerId: 'w1', device: 'cpu', attempt: 1, startedAt: new Date(now - (endedAgo ?? 0) * 1000 - seconds * 1000), endedAt: endedAgo === null ? null : new Date(now - endedAgo * 1000) } });
    const waiting = { ann: [await job(ann.id, 'queued'), await job(ann.id, 'queued'), await job(ann.id, 'queued')], bob: [await job(bob.id, 'queued')], cy: [await job(cy.id, 'queued')] };
    await usage(ann.id, waiting.ann[0], 600, 0);
    await usage(cy.id, waiting.cy[0], 60, 0);
    await usage(bob.id, waiting.bob[0], 3600, 60);

    const { placements } = await dispatch.explain();
    const reasonOf = Object.fromEntries(placements.map((p) => [p.jobId, p.reason]));
    // bob first (nothing active), then ann twice (one running + two placed fill her quota of 3);
    // cy's turn came before ann's (less usage) but her quota of 1 is full: she waits at the back
    // with ann's third job.
    expect(placements.map((p) => p.jobId)).toEqual([waiting.bob[0], waiting.ann[0], waiting.ann[1], waiting.cy[0], waiting.ann[2]]);

    // Every number a reason states, against the rows.
    const running = async (ownerId: string) => prisma.job.count({ where: { ownerId, status: 'running' } });
    const slots = (await prisma.worker.findMany()).reduce((n, w) => n + w.slots, 0);
    expect(reasonOf[waiting.bob[0]]).toBe(`all ${slots} cpu slot(s) are busy`);
    expect(await prisma.job.count({ where: { status: 'running' } })).toBe(slots);
    expect(reasonOf[waiting.cy[0]]).toBe(`the owner has ${await running(cy.id)} job(s) running or starting; their quota of ${cy.maxRunningJobs} is full`);
    expect(reasonOf[waiting.ann[0]]).toBe(`all ${slots} cpu slot(s) are busy`);
    expect(reasonOf[waiting.ann[1]]).toBe(`all ${slots} cpu slot(s) are busy`);
    const placedBefore = placements.slice(0, placements.findIndex((p) => p.jobId === waiting.ann[2])).filter((p) => p.ownerId === ann.id).length;
    expect(reasonOf[waiting.ann[2]]).toBe(`the owner has ${await running(ann.id)} job(s) running or starting and ${placedBefore} more placed before this one; their quota of ${ann.maxRunningJobs} is full`);
    expect((await running(ann.id)) + placedBefore).toBe(ann.maxRunningJobs);
  });
});

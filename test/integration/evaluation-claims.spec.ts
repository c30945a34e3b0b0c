import { Test, TestingModule } from '@nestjs/testing';
import { EvaluationRepository } from '../../src/repositories/evaluation.repository';
import { DATABASE_URL, PrismaService } from '../../src/repositories/prisma.service';
import { createTestDatabase, TestDatabase } from '../support/database';

/** Postgres as the evaluations' queue: one claim per evaluation, and a dead worker's claim taken over. */
describe('evaluation claims (real Postgres)', () => {
  let database: TestDatabase;
  let moduleRef: TestingModule;
  let prisma: PrismaService;
  let evaluations: EvaluationRepository;
  let jobId: string;
  let checkpointId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    moduleRef = await Test.createTestingModule({ providers: [PrismaService, EvaluationRepository, { provide: DATABASE_URL, useValue: database.url }] }).compile();
    await moduleRef.init();
    prisma = moduleRef.get(PrismaService);
    evaluations = moduleRef.get(EvaluationRepository);
    const owner = await prisma.user.create({ data: { name: 'ada', role: 'member' } });
    const job = await prisma.job.create({ data: { ownerId: owner.id, name: 'j', spec: {}, status: 'succeeded', priority: 0, labels: {}, totalSteps: 4 } });
    jobId = job.id;
    checkpointId = (await prisma.checkpoint.create({ data: { jobId, step: 4, bytes: new Uint8Array([1, 2, 3]), sizeBytes: 3 } })).id;
  });
  afterAll(async () => {
    await moduleRef?.close();
    await database?.drop();
  });

  const request = () => evaluations.create({ jobId, checkpointId, step: 4, environment: { id: 'bandit', config: {} }, episodes: 8, k: 2, temperature: 0.5 });
  const heartbeat = (id: string, at: Date) =>
    prisma.worker.upsert({ where: { id }, create: { id, hostname: 'h', backend: 'wasm', device: 'cpu', slots: 1, lastHeartbeatAt: at }, update: { lastHeartbeatAt: at } });

  it('gives each waiting evaluation to exactly one of many workers claiming at once, oldest first', async () => {
    const first = await request();
    const second = await request();
    await heartbeat('w1', new Date());
    await heartbeat('w2', new Date());
    await heartbeat('w3', new Date());
    const claims = await Promise.all(['w1', 'w2', 'w3'].map((w) => evaluations.claim(w, 60_000)));
    const taken = claims.filter((c) => c !== null);
    expect(taken.map((c) => c!.id).sort()).toEqual([first.id, second.id].sort());
    expect(new Set(taken.map((c) => c!.workerId)).size).toBe(2);
    expect(taken.every((c) => c!.status === 'running' && c!.startedAt !== null)).toBe(true);
    // A worker that lost its claim cannot store a result over the new holder's.
    const [held] = taken;
    expect(await evaluations.finish(held!.id, 'someone-else', { status: 'succeeded', success: 1 })).toBe(false);
    expect(await evaluations.finish(held!.id, held!.workerId!, { status: 'succeeded', success: 0.5, passAtK: 0.75 })).toBe(true);
    await prisma.evaluation.updateMany({ data: { status: 'succeeded' } });
  });

  it('takes over an evaluation whose worker stopped heart-beating, and leaves a live worker’s alone', async () => {
    const running = await request();
    await heartbeat('alive', new Date());
    await heartbeat('dead', new Date(Date.now() - 120_000));
    await prisma.evaluation.update({ where: { id: running.id }, data: { status: 'running', workerId: 'alive', startedAt: new Date() } });
    expect(await evaluations.claim('w1', 60_000)).toBeNull();
    await prisma.evaluation.update({ where: { id: running.id }, data: { workerId: 'dead' } });
    const retaken = await evaluations.claim('w1', 60_000);
    expect(retaken).toMatchObject({ id: running.id, status: 'running', workerId: 'w1' });
    // A worker that is gone altogether (its row removed on shutdown) counts as dead too.
    await prisma.evaluation.update({ where: { id: running.id }, data: { workerId: 'removed' } });
    expect((await evaluations.claim('w2', 60_000))?.workerId).toBe('w2');
  });

  it('gives back, at a worker\'s start, the evaluations an earlier process of its name was playing; leaves others alone', async () => {
    await prisma.evaluation.updateMany({ data: { status: 'succeeded' } });
    const mine = await request();
    const theirs = await request();
    await prisma.evaluation.update({ where: { id: mine.id }, data: { status: 'running', workerId: 'restarted', startedAt: new Date() } });
    await prisma.evaluation.update({ where: { id: theirs.id }, data: { status: 'running', workerId: 'other', startedAt: new Date() } });
    expect(await evaluations.reclaim('restarted')).toBe(1);
    expect(await prisma.evaluation.findUnique({ where: { id: mine.id } })).toMatchObject({ status: 'queued', workerId: null, startedAt: null });
    expect(await prisma.evaluation.findUnique({ where: { id: theirs.id } })).toMatchObject({ status: 'running', workerId: 'other' });
  });

  it('fails an evaluation still running past the bound, whoever holds it, and no other', async () => {
    await prisma.evaluation.updateMany({ data: { status: 'succeeded' } });
    const stuck = await request();
    const fresh = await request();
    await prisma.evaluation.update({ where: { id: stuck.id }, data: { status: 'running', workerId: 'alive', startedAt: new Date(Date.now() - 120_000) } });
    await prisma.evaluation.update({ where: { id: fresh.id }, data: { status: 'running', workerId: 'alive', startedAt: new Date() } });
    expect(await evaluations.expire(60_000, 'timed out')).toBe(1);
    expect(await prisma.evaluation.findUnique({ where: { id: stuck.id } })).toMatchObject({ status: 'failed', error: 'timed out', finishedAt: expect.any(Date) });
    expect(await prisma.evaluation.findUnique({ where: { id: fresh.id } })).toMatchObject({ status: 'running' });
  });
});

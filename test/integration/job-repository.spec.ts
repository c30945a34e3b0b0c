import { JobRepository } from '../../src/repositories/job.repository';
import { PrismaService } from '../../src/repositories/prisma.service';
import { createTestDatabase, TestDatabase } from '../support/database';

/**
 * `JobRepository.findById` reads with a prepared statement and maps the row itself; it must give
 * exactly what Prisma's own query gives, field for field and type for type, with every nullable
 * column both set and empty, or a column added to the schema would go missing from job reads.
 */
describe('JobRepository.findById', () => {
  let database: TestDatabase;
  let prisma: PrismaService;
  let jobs: JobRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaService(database.url);
    await prisma.$connect();
    jobs = new JobRepository(prisma);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  const prismaRead = (id: string) => prisma.job.findUnique({ where: { id }, include: { owner: true } });

  it('equals Prisma’s read of a job whose every nullable field is empty', async () => {
    const owner = await prisma.user.create({ data: { name: 'bare', role: 'member' } });
    const job = await prisma.job.create({ data: { ownerId: owner.id, name: 'j', spec: { a: [1, 2] }, status: 'queued', priority: 0, labels: {}, totalSteps: 10 } });
    expect(await jobs.findById(job.id)).toStrictEqual(await prismaRead(job.id));
  });

  it('equals Prisma’s read of a job whose every nullable field is set', async () => {
    const team = await prisma.team.create({ data: { name: 'lab' } });
    const owner = await prisma.user.create({ data: { name: 'full', role: 'admin', teamId: team.id, maxRunningJobs: 3, maxQueuedJobs: 7, disabledAt: new Date('2026-01-02T03:04:05.678Z') } });
    const parent = await prisma.job.create({ data: { ownerId: owner.id, name: 'parent', spec: {}, status: 'succeeded', priority: 1, labels: {}, totalSteps: 1 } });
    const job = await prisma.job.create({
      data: {
        ownerId: owner.id, name: 'full', spec: { nested: { x: 0.5 } }, status: 'running', priority: 5, labels: { team: 'a' }, device: 'gpu', progress: 0.25, currentStep: 3,
        totalSteps: 12, attempt: 2, rollbacks: 1, failedAttempts: 1, error: 'e', idempotencyKey: 'k', requestHash: 'h', workerId: 'w', backend: 'wasm',
        latestMetrics: { 'reward/mean': 0.125 }, controlRequest: 'pause', dispatchedAt: new Date('2026-01-01T00:00:00.001Z'), dispatchedDevice: 'cpu',
        startedAt: new Date('2026-01-01T00:00:01.002Z'), finishedAt: new Date('2026-01-01T00:00:02.003Z'), parentJobId: parent.id, parentStep: 4,
      },
    });
    const read = await jobs.findById(job.id);
    expect(read).toStrictEqual(await prismaRead(job.id));
    expect(read?.owner.disabledAt).toEqual(new Date('2026-01-02T03:04:05.678Z'));
  });

  it('is null for an id no job has', async () => {
    expect(await jobs.findById('00000000-0000-4000-8000-000000000000')).toBeNull();
  });
});

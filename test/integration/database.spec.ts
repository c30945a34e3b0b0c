import { createHash, randomBytes } from 'node:crypto';
import { Test, TestingModule } from '@nestjs/testing';
import { DATABASE_URL, IDLE_IN_TRANSACTION_MS, PrismaService } from '../../src/repositories/prisma.service';
import { createTestDatabase, TestDatabase } from '../support/database';

describe('database (real Postgres)', () => {
  let database: TestDatabase;
  let moduleRef: TestingModule;
  let prisma: PrismaService;

  beforeAll(async () => {
    database = await createTestDatabase();
    moduleRef = await Test.createTestingModule({
      providers: [PrismaService, { provide: DATABASE_URL, useValue: database.url }],
    }).compile();
    await moduleRef.init();
    prisma = moduleRef.get(PrismaService);
  });

  afterAll(async () => {
    await moduleRef?.close();
    await database?.drop();
  });

  async function createUser(name: string) {
    return prisma.user.create({ data: { name, role: 'member' } });
  }

  async function createJob(ownerId: string, idempotencyKey?: string) {
    return prisma.job.create({
      data: {
        ownerId,
        name: 'frozenlake-grpo',
        spec: { env: { name: 'frozenlake', size: 4 }, algorithm: 'grpo', steps: 10 },
        status: 'queued',
        priority: 0,
        labels: { team: 'rl' },
        totalSteps: 10,
        idempotencyKey,
      },
    });
  }

  it('stores a user, a hashed API key and a job with its defaults', async () => {
    const team = await prisma.team.create({ data: { name: 'rl-lab' } });
    const user = await prisma.user.create({ data: { name: 'ada', role: 'admin', teamId: team.id } });
    const key = `sl_${randomBytes(24).toString('hex')}`;
    const hash = createHash('sha256').update(key).digest('hex');
    await prisma.apiKey.create({ data: { userId: user.id, name: 'laptop', prefix: key.slice(0, 8), hash } });

    const found = await prisma.apiKey.findUnique({ where: { hash }, include: { user: { include: { team: true } } } });
    expect(found?.user.name).toBe('ada');
    expect(found?.user.team?.shareJobs).toBe(false);
    expect(found?.user.maxRunningJobs).toBeNull();

    const job = await createJob(user.id, 'retry-1');
    expect(job).toMatchObject({ device: 'any', progress: 0, currentStep: 0, attempt: 0, controlRequest: null });
    expect(job.spec).toEqual({ env: { name: 'frozenlake', size: 4 }, algorithm: 'grpo', steps: 10 });
    expect(job.createdAt).toBeInstanceOf(Date);

    const running = await prisma.job.update({ where: { id: job.id }, data: { status: 'running', startedAt: new Date() } });
    expect(running.updatedAt.getTime()).toBeGreaterThanOrEqual(job.updatedAt.getTime());

    // The same idempotency key twice for one owner is refused (P2002 = unique constraint).
    await expect(createJob(user.id, 'retry-1')).rejects.toMatchObject({ code: 'P2002' });
  });

  it('orders job events by a bigint id', async () => {
    const job = await createJob((await createUser('ev')).id);
    for (const message of ['queued', 'running', 'step 1']) {
      await prisma.jobEvent.create({ data: { jobId: job.id, type: 'state', message, data: { message } } });
    }
    const events = await prisma.jobEvent.findMany({ where: { jobId: job.id }, orderBy: { id: 'asc' } });
    expect(events.map((event) => event.message)).toEqual(['queued', 'running', 'step 1']);
    expect(typeof events[0].id).toBe('bigint');
    expect(events[1].id).toBeGreaterThan(events[0].id);

    const after = await prisma.jobEvent.findMany({ where: { jobId: job.id, id: { gt: events[0].id } } });
    expect(after).toHaveLength(2);
  });

  it('makes a retried step-metric write harmless', async () => {
    const job = await createJob((await createUser('sm')).id);
    const write = (loss: number) =>
      prisma.stepMetric.upsert({
        where: { jobId_step: { jobId: job.id, step: 1 } },
        create: { jobId: job.id, step: 1, metrics: { loss } },
        update: { metrics: { loss } },
      });
    await write(0.5);
    await write(0.5);
    const rows = await prisma.stepMetric.findMany({ where: { jobId: job.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0].metrics).toEqual({ loss: 0.5 });
  });

  it('rolls back an interactive transaction that throws', async () => {
    const job = await createJob((await createUser('tx')).id);
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.stepMetric.create({ data: { jobId: job.id, step: 2, metrics: {} } });
        throw new Error('worker lost its lease');
      }),
    ).rejects.toThrow('worker lost its lease');
    expect(await prisma.stepMetric.count({ where: { jobId: job.id } })).toBe(0);
  });

  it('round-trips checkpoint bytes and a 64-bit trajectory seed exactly', async () => {
    const job = await createJob((await createUser('ck')).id);
    const bytes = Uint8Array.from([0, 255, 1, 0, 128, ...randomBytes(256 * 1024)]);
    const checkpoint = await prisma.checkpoint.create({
      data: { jobId: job.id, step: 5, bytes, sizeBytes: bytes.length, health: 'healthy' },
    });
    const stored = await prisma.checkpoint.findUniqueOrThrow({ where: { id: checkpoint.id } });
    expect(stored.bytes).not.toBeNull();
    expect(Buffer.from(stored.bytes!).equals(Buffer.from(bytes))).toBe(true);

    const envSeed = 2n ** 63n - 1n; // largest BIGINT, far past Number.MAX_SAFE_INTEGER
    await prisma.trajectory.create({
      data: {
        jobId: job.id, step: 5, group: 0, sample: 1, envSeed, return: 0.75, success: true,
        turns: 3, actions: 4, formatErrors: 0, tokens: 96, meanEntropy: 1.25, text: '<answer>Right</answer>',
      },
    });
    const trajectory = await prisma.trajectory.findFirstOrThrow({ where: { jobId: job.id, success: true } });
    expect(trajectory.envSeed).toBe(envSeed);
    expect(String(trajectory.envSeed)).toBe('9223372036854775807');
    expect(() => JSON.stringify(trajectory)).toThrow(/BigInt/);
  });

  it('deletes everything a job owns with the job, and keeps users that own jobs', async () => {
    const user = await createUser('cascade');
    const job = await createJob(user.id);
    const jobId = job.id;
    const checkpoint = await prisma.checkpoint.create({ data: { jobId, step: 1, storageUri: 'file:///ck/1', sizeBytes: 10 } });
    await prisma.$transaction([
      prisma.jobEvent.create({ data: { jobId, type: 'log', message: 'hello' } }),
      prisma.stepMetric.create({ data: { jobId, step: 1, metrics: { reward: 1 } } }),
      prisma.trajectory.create({
        data: { jobId, step: 1, group: 0, sample: 0, envSeed: 7n, return: 1, success: true, turns: 1, actions: 1, formatErrors: 0, tokens: 8, meanEntropy: 0.5 },
      }),
      prisma.collapseWarning.create({
        data: { jobId, step: 1, detector: 'reward_std_drop', signal: 'reward/std_in_group', value: 0.01, threshold: 0.05, severity: 'warning', message: 'reward std fell' },
      }),
      prisma.evaluation.create({
        data: { jobId, checkpointId: checkpoint.id, status: 'queued', environment: { name: 'frozenlake' }, episodes: 16 },
      }),
    ]);

    await expect(prisma.user.delete({ where: { id: user.id } })).rejects.toMatchObject({ code: 'P2003' });

    await prisma.job.delete({ where: { id: jobId } });
    const remaining = await Promise.all([
      prisma.jobEvent.count({ where: { jobId } }),
      prisma.stepMetric.count({ where: { jobId } }),
      prisma.trajectory.count({ where: { jobId } }),
      prisma.checkpoint.count({ where: { jobId } }),
      prisma.collapseWarning.count({ where: { jobId } }),
      prisma.evaluation.count({ where: { jobId } }),
    ]);
    expect(remaining).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await prisma.user.count({ where: { id: user.id } })).toBe(1);
  });
  it('ends a session that idles inside a transaction, so a frozen process does not hold a job row locked', async () => {
    expect(IDLE_IN_TRANSACTION_MS).toBe(15_000);
    const job = await createJob((await createUser('frozen')).id);
    // A client whose sessions may idle 1 s in a transaction, standing for a process frozen mid-write.
    const frozen = new PrismaService(database.url, 1000);
    let release!: () => void;
    const frozenAt = new Promise<void>((resolve) => (release = resolve));
    const held = frozen
      .$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM jobs WHERE id = ${job.id}::uuid FOR UPDATE`;
        release();
        await new Promise((resolve) => setTimeout(resolve, 6000)); // frozen, its row lock held
        await tx.job.update({ where: { id: job.id }, data: { currentStep: 99 } });
      }, { timeout: 10_000 })
      .then(() => 'committed', (error: Error) => `refused: ${error.message}`);
    await frozenAt;
    // Another process's write waits for the lock only until Postgres ends the idle session.
    const started = Date.now();
    await prisma.job.update({ where: { id: job.id }, data: { currentStep: 7 } });
    const waited = Date.now() - started;
    expect(waited).toBeLessThan(5000); // long before the frozen one wakes (6 s)
    // The frozen transaction's write, when it wakes, is refused; the other process's stays.
    expect(await held).toMatch(/^refused/);
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.id } })).currentStep).toBe(7);
    await frozen.$disconnect();
  }, 30_000);
});

import { Test, TestingModule } from '@nestjs/testing';
import { DATABASE_URL, PrismaService } from '../../src/repositories/prisma.service';
import { JobRowCache, NO_JOB_ROW_CACHE } from '../../src/repositories/job-row-cache';
import { AttemptToken, JobLifecycleRepository } from '../../src/repositories/job-lifecycle.repository';
import { withRetry } from '../../src/services/retry';
import { createTestDatabase, TestDatabase } from '../support/database';
import { CommitReplyDropper } from '../support/pg-proxy';

/**
 * A write whose COMMIT reached Postgres but whose answer was lost on the way back: the worker
 * sees a broken connection and retries the write (docs/failure-behaviour.md). The retry must not
 * store a second copy of anything, events included.
 */
describe('a retried write after a lost COMMIT answer (real Postgres behind a proxy)', () => {
  let database: TestDatabase;
  let proxy: CommitReplyDropper;
  let moduleRef: TestingModule;
  let prisma: PrismaService;
  let lifecycle: JobLifecycleRepository;
  let jobId: string;
  let token: AttemptToken;

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.url);
    proxy = await CommitReplyDropper.start({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    moduleRef = await Test.createTestingModule({ providers: [PrismaService, { provide: DATABASE_URL, useValue: proxied.toString() }, { provide: JobRowCache, useValue: NO_JOB_ROW_CACHE }, JobLifecycleRepository] }).compile();
    await moduleRef.init();
    prisma = moduleRef.get(PrismaService);
    lifecycle = moduleRef.get(JobLifecycleRepository);
    const owner = await prisma.user.create({ data: { name: 'lost-replies', role: 'member' } });
    jobId = (await prisma.job.create({ data: { ownerId: owner.id, name: 'lost', spec: {}, status: 'running', priority: 0, labels: {}, totalSteps: 10, attempt: 1, workerId: 'w1' } })).id;
    token = { jobId, attempt: 1, workerId: 'w1' };
  }, 30_000);
  afterAll(async () => {
    await moduleRef?.close();
    await proxy?.stop();
    await database?.drop();
  }, 30_000);

  /** As the worker stores a result: retried while the error is a connection failure. */
  async function storeLosingTheFirstAnswer<T>(write: () => Promise<T>, tag = 'COMMIT'): Promise<{ retries: number }> {
    let retries = 0;
    proxy.arm(1, tag);
    const dropped = proxy.dropped;
    await withRetry(write, { deadlineMs: 10_000, onRetry: () => retries++ });
    expect(proxy.dropped).toBe(dropped + 1); // the answer really was lost, and the write retried
    return { retries };
  }

  const events = (type: string) => prisma.jobEvent.findMany({ where: { jobId, type }, select: { data: true } });

  it('a step: one metrics row and one step event', async () => {
    const trajectory = { group: 0, sample: 0, envSeed: 7, return: 1, success: true, turns: 1, actions: 1, formatErrors: 0, tokens: 8, meanEntropy: 0.5 };
    // A step is one statement, committed on its own: its answer (UPDATE, of the job row) is the one lost.
    const { retries } = await storeLosingTheFirstAnswer(() => lifecycle.saveStep(token, 3, 10, { 'reward/mean': 0.5 }, [trajectory]), 'UPDATE');
    expect(retries).toBe(1);
    expect(await prisma.stepMetric.count({ where: { jobId, step: 3 } })).toBe(1);
    expect(await prisma.trajectory.count({ where: { jobId, step: 3 } })).toBe(1);
    expect(await events('step')).toEqual([{ data: { step: 3, metrics: { 'reward/mean': 0.5 } } }]);
    expect(await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).toMatchObject({ currentStep: 3, progress: 0.3 });
  });

  it('a checkpoint: one row and one checkpoint event', async () => {
    await storeLosingTheFirstAnswer(() => lifecycle.saveCheckpoint(token, 4, Uint8Array.from([1, 2, 3]), 5, 'healthy'));
    expect(await prisma.checkpoint.count({ where: { jobId, step: 4 } })).toBe(1);
    expect((await events('checkpoint')).map((e) => (e.data as { step: number }).step)).toEqual([4]);
  });

  it('warnings: one row and one warning event each', async () => {
    const warning = { step: 4, detector: 'reward_std_drop' as const, signal: 'reward/std_in_group', value: 0.01, threshold: 0.05, severity: 'warning' as const, message: 'reward std fell' };
    await storeLosingTheFirstAnswer(() => lifecycle.saveWarnings(token, [warning]));
    expect(await prisma.collapseWarning.count({ where: { jobId } })).toBe(1);
    expect(await events('warning')).toHaveLength(1);
  });
});

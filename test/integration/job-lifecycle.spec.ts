import { AttemptLost, AttemptToken, JobLifecycleRepository } from '../../src/repositories/job-lifecycle.repository';
import { PrismaService } from '../../src/repositories/prisma.service';
import { UsageRepository } from '../../src/repositories/usage.repository';
import { outranked, TRANSITIONS } from '../../src/services/job-lifecycle';
import { createTestDatabase, TestDatabase } from '../support/database';

/**
 * JobLifecycleRepository against a real Postgres: every change a compare-and-set, every write of
 * an attempt fenced by its token, usage records opened and closed with the attempts.
 */
describe('JobLifecycleRepository (real Postgres)', () => {
  let database: TestDatabase;
  let prisma: PrismaService;
  let lifecycle: JobLifecycleRepository;
  let ownerId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaService(database.url);
    await prisma.$connect();
    lifecycle = new JobLifecycleRepository(prisma);
    ownerId = (await prisma.user.create({ data: { name: 'fenced', role: 'member' } })).id;
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  const queued = async () => (await prisma.job.create({ data: { ownerId, name: 'j', spec: {}, status: 'queued', priority: 0, labels: {}, totalSteps: 10 } })).id;
  const worker = (id: string, lastHeartbeatAt = new Date()) =>
    prisma.worker.upsert({ where: { id }, create: { id, hostname: 'h', backend: 'wasm', device: 'cpu', slots: 1, lastHeartbeatAt }, update: { lastHeartbeatAt } });
  const start = (jobId: string, seen: number, workerId: string) => lifecycle.start(jobId, TRANSITIONS.start, seen, { id: workerId, device: 'cpu' }, (_, attempt) => `running on ${workerId} (attempt ${attempt})`);
  const row = (id: string) => prisma.job.findUniqueOrThrow({ where: { id } });
  const usage = (jobId: string) => prisma.usageRecord.findMany({ where: { jobId }, orderBy: { attempt: 'asc' } });
  const step = (token: AttemptToken, n: number) => lifecycle.saveStep(token, n, 10, { 'reward/mean': n }, []);

  it('gives a job to exactly one of two workers that start it at once', async () => {
    const id = await queued();
    const [a, b] = await Promise.all([start(id, 0, 'wa'), start(id, 0, 'wb')]);
    expect([a, b].filter((s) => s !== null)).toHaveLength(1);
    expect(await row(id)).toMatchObject({ status: 'running', attempt: 1, workerId: (a ?? b)!.token.workerId });
    expect(await usage(id)).toHaveLength(1);
  });

  it('refuses every write of an attempt once another has taken the job over, and stores none of it', async () => {
    const id = await queued();
    await worker('frozen', new Date(Date.now() - 30_000));
    const first = (await start(id, 0, 'frozen'))!.token;
    await step(first, 0);
    await lifecycle.saveCheckpoint(first, 0, new Uint8Array([1]), 5, 'healthy');
    await step(first, 1);
    // The queue gave the job to another worker: it resumes from the checkpoint at step 0.
    const second = (await start(id, 1, 'rescuer'))!;
    expect(second.fromStep).toBe(0);
    const lost = (write: Promise<unknown>) => expect(write).rejects.toBeInstanceOf(AttemptLost);
    await lost(step(first, 2));
    await lost(lifecycle.saveCheckpoint(first, 2, new Uint8Array([2]), 5, 'healthy'));
    await lost(lifecycle.saveWarnings(first, [{ step: 2, detector: 'grad_norm_spike', signal: 'grad_norm/actor', value: 9, threshold: 3, severity: 'critical', message: 'm' }]));
    await lost(lifecycle.log(first, 'still here'));
    await lost(lifecycle.settle(first, new Date(), () => ({ change: TRANSITIONS.succeed, data: {}, record: { message: 'succeeded' } })));
    expect(await prisma.stepMetric.findMany({ where: { jobId: id }, select: { step: true } })).toEqual([{ step: 0 }]);
    expect(await prisma.checkpoint.count({ where: { jobId: id } })).toBe(1);
    expect(await prisma.collapseWarning.count({ where: { jobId: id } })).toBe(0);
    expect(await prisma.jobEvent.count({ where: { jobId: id, message: 'still here' } })).toBe(0);
    expect(await row(id)).toMatchObject({ status: 'running', attempt: 2, workerId: 'rescuer', currentStep: 0 });
    // The frozen attempt's slot time ended when its worker was last heard from, 30 s before the takeover.
    const [lostUsage, current] = await usage(id);
    expect(lostUsage).toMatchObject({ attempt: 1, workerId: 'frozen' });
    expect(lostUsage.endedAt!.getTime()).toBe(Math.max(lostUsage.startedAt.getTime(), (await prisma.worker.findUniqueOrThrow({ where: { id: 'frozen' } })).lastHeartbeatAt.getTime()));
    expect(current).toMatchObject({ attempt: 2, workerId: 'rescuer', endedAt: null });
    // The new attempt writes as usual.
    await step(second.token, 1);
  });

  it('never lets a pause or a preempt replace a pending cancel; a cancel replaces either', async () => {
    const id = await queued();
    await start(id, 0, 'w1');
    const ask = (request: 'cancel' | 'pause' | 'preempt') => lifecycle.requestControl(id, request, outranked(request), { message: `${request} requested` });
    expect((await ask('preempt'))?.controlRequest).toBe('preempt');
    expect((await ask('pause'))?.controlRequest).toBe('pause');
    expect(await ask('preempt')).toBeNull();
    expect((await ask('cancel'))?.controlRequest).toBe('cancel');
    expect(await ask('pause')).toBeNull();
    expect(await ask('preempt')).toBeNull();
    expect((await row(id)).controlRequest).toBe('cancel');
  });

  it('settles an attempt with the request pending at that moment, closing its usage when its slot was freed', async () => {
    const id = await queued();
    const { token } = (await start(id, 0, 'w1'))!;
    await lifecycle.requestControl(id, 'cancel', outranked('cancel'), { message: 'cancel requested' });
    const freedAt = new Date(Date.now() - 1000);
    let seen: string | null = 'nothing';
    const settled = await lifecycle.settle(token, freedAt, (pending) => {
      seen = pending;
      return { change: pending === 'cancel' ? TRANSITIONS.cancel : TRANSITIONS.succeed, data: { controlRequest: null, finishedAt: new Date() }, record: { message: pending === 'cancel' ? 'cancelled' : 'succeeded' } };
    });
    expect(seen).toBe('cancel');
    expect(settled).toMatchObject({ status: 'cancelled', controlRequest: null });
    expect((await usage(id))[0].endedAt).toEqual(freedAt);
    // A second try (its first answer lost) changes nothing.
    await expect(lifecycle.settle(token, new Date(), () => ({ change: TRANSITIONS.succeed, data: {}, record: { message: 'succeeded' } }))).rejects.toBeInstanceOf(AttemptLost);
    expect((await row(id)).status).toBe('cancelled');
  });

  it('rescues a job whose worker stopped answering only at the attempt seen, closing its usage at the last heartbeat', async () => {
    const id = await queued();
    await worker('gone');
    await start(id, 0, 'gone');
    const heardAt = new Date(Date.now() - 5000);
    await worker('gone', heardAt);
    const rescue = (attempt: number) => lifecycle.transition(id, TRANSITIONS.rescue, { workerId: null, dispatchedAt: null }, { message: 'requeued: worker gone stopped answering' }, { attempt, workerId: 'gone' });
    expect(await rescue(2)).toBeNull(); // not the attempt that runs
    expect(await rescue(1)).toMatchObject({ status: 'queued', workerId: null });
    const [record] = await usage(id);
    expect(record.endedAt!.getTime()).toBe(Math.max(record.startedAt.getTime(), heardAt.getTime()));
    // Paused while queued: nothing more to close; the usage stays what it was.
    await lifecycle.transition(id, TRANSITIONS.pauseWaiting, {}, { message: 'paused' });
    expect((await usage(id))[0].endedAt).toEqual(record.endedAt);
  });

  it('counts an open attempt in /v1/usage only up to when its worker was last heard from', async () => {
    const user = await prisma.user.create({ data: { name: 'held', role: 'member' } });
    const job = await prisma.job.create({ data: { ownerId: user.id, name: 'j', spec: {}, status: 'queued', priority: 0, labels: {}, totalSteps: 10 } });
    await worker('quiet');
    await start(job.id, 0, 'quiet');
    // Started 60 s ago, last heard from 20 s after it started, then silent (killed, frozen).
    const startedAt = new Date(Date.now() - 60_000);
    await prisma.usageRecord.updateMany({ where: { jobId: job.id }, data: { startedAt } });
    await worker('quiet', new Date(startedAt.getTime() + 20_000));
    const [row] = await new UsageRepository(prisma).summary(new Date(startedAt.getTime() - 1000), new Date(), user.id);
    expect(row.slotSeconds).toBeCloseTo(20, 3);
  });
});

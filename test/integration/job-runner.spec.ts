import { Test, TestingModule } from '@nestjs/testing';
import { APP_CONFIG, loadConfig } from '../../src/config/config';
import { JobRowCache } from '../../src/repositories/job-row-cache';
import { JobLifecycleRepository } from '../../src/repositories/job-lifecycle.repository';
import { JobRepository } from '../../src/repositories/job.repository';
import { ProcessRepository } from '../../src/repositories/process.repository';
import { DATABASE_URL, PrismaService } from '../../src/repositories/prisma.service';
import { ResultsRepository } from '../../src/repositories/results.repository';
import { WebhookRepository } from '../../src/repositories/webhook.repository';
import { outranked, TRANSITIONS } from '../../src/services/job-lifecycle';
import { parseJobSpec } from '../../src/training/spec/validate';
import { JobRunnerService } from '../../src/worker/job-runner.service';
import { AuditRepository } from '../../src/repositories/audit.repository';
import { EnvironmentServerRepository } from '../../src/repositories/environment-server.repository';
import { createTestDatabase, TestDatabase } from '../support/database';
import { injectFault, InjectedFault } from '../support/faults';
import { tinyJob } from '../support/stack';

/**
 * The job runner against a real Postgres whose writes fail where a test says so (a trigger
 * raising the error a restarting server gives, or a plain one), training real child processes:
 * however a write fails, the run ends, the slot is freed, and the job is not left `running`
 * (docs/failure-behaviour.md).
 */
describe('job runner when writes fail (real Postgres, real training)', () => {
  let database: TestDatabase;
  let moduleRef: TestingModule;
  let runner: JobRunnerService;
  let jobs: JobRepository;
  let lifecycle: JobLifecycleRepository;
  let prisma: PrismaService;
  let ownerId: string;
  const faults: InjectedFault[] = [];

  /** Each describe block gets a runner with its own settings (write deadline, attempts). */
  async function start(env: Record<string, string>): Promise<void> {
    database = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: database.url, STARLAB_BACKEND: 'wasm', STARLAB_WORKER_NAME: 'runner-under-test', STARLAB_CONTROL_POLL_MS: '100', ...env });
    moduleRef = await Test.createTestingModule({
      providers: [PrismaService, { provide: DATABASE_URL, useValue: database.url }, { provide: APP_CONFIG, useValue: config }, JobRowCache, JobRepository, JobLifecycleRepository, ResultsRepository, WebhookRepository, ProcessRepository, AuditRepository, EnvironmentServerRepository, JobRunnerService],
    }).compile();
    await moduleRef.init();
    runner = moduleRef.get(JobRunnerService);
    jobs = moduleRef.get(JobRepository);
    lifecycle = moduleRef.get(JobLifecycleRepository);
    prisma = moduleRef.get(PrismaService);
    ownerId = (await prisma.user.create({ data: { name: 'runner-tests', role: 'member' } })).id;
  }

  async function stop(): Promise<void> {
    for (const fault of faults.splice(0)) await fault.remove().catch(() => undefined);
    await moduleRef?.close();
    await database?.drop();
  }

  async function fault(table: string, when: string, options: Parameters<typeof injectFault>[3]): Promise<InjectedFault> {
    const injected = await injectFault(database.url, table, when, options);
    faults.push(injected);
    return injected;
  }

  async function submit(overrides: Record<string, unknown> = {}, shape: Parameters<typeof tinyJob>[0] = {}): Promise<string> {
    const spec = parseJobSpec({ ...tinyJob({ steps: 6, checkpointEvery: 2, ...shape }), ...overrides });
    const job = await jobs.create({ ownerId, name: spec.name, spec: spec as unknown as object, priority: 0, labels: {}, device: 'any', totalSteps: spec.training.steps, idempotencyKey: null, requestHash: null });
    return job.id;
  }

  /** `run()` of the runner, which must settle within `ms`: a hung run is a failure, not a timeout. */
  async function runWithin(jobId: string, ms: number): Promise<'returned'> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
    const result = await Promise.race([runner.run(jobId).then(() => 'returned' as const), hung]);
    clearTimeout(timer);
    expect(result).toBe('returned');
    expect(runner.running).toBe(0); // the slot is free
    return 'returned';
  }

  async function until(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  afterEach(async () => {
    for (const fault of faults.splice(0)) await fault.remove();
  });

  const job = (id: string) => prisma.job.findUniqueOrThrow({ where: { id } });
  const messages = async (id: string) => (await prisma.jobEvent.findMany({ where: { jobId: id }, orderBy: { id: 'asc' } })).map((e) => e.message);
  const steps = async (id: string) => (await prisma.stepMetric.findMany({ where: { jobId: id }, orderBy: { step: 'asc' } })).map((m) => m.step);

  describe('with a short write deadline and two attempts', () => {
    beforeAll(() => start({ STARLAB_WRITE_DEADLINE_MS: '1500', STARLAB_MAX_FAILED_ATTEMPTS: '2' }), 30_000);
    afterAll(() => stop(), 30_000);

    it('a step that cannot be stored before the deadline ends the attempt: requeued with the reason, then failed when attempts run out', async () => {
      const id = await submit();
      const stepWrites = await fault('step_metrics', 'NEW.step >= 2', { transient: true });
      await runWithin(id, 30_000);
      expect(await job(id)).toMatchObject({ status: 'queued', failedAttempts: 1, workerId: null, dispatchedAt: null });
      expect(await messages(id)).toContainEqual(expect.stringMatching(/^requeued after failed attempt 1 of 2: could not store step 2: .*injected fault on step_metrics/));
      expect(await steps(id)).toEqual([0, 1]);
      expect(await stepWrites.hits()).toBeGreaterThan(1); // retried before giving up

      // Sent again (as the scheduler would): the same write fails, and that was the last attempt.
      await runWithin(id, 30_000);
      const failed = await job(id);
      expect(failed).toMatchObject({ status: 'failed', failedAttempts: 2, attempt: 2 });
      expect(failed.error).toMatch(/^could not store step 2: .*injected fault on step_metrics.* \(failed attempt 2 of 2\)$/);
      expect(await prisma.usageRecord.count({ where: { jobId: id, endedAt: null } })).toBe(0);
    }, 60_000);

    it('an attempt whose start cannot be stored (its usage record refused) leaves the job waiting, the failed attempt counted', async () => {
      const id = await submit();
      await fault('usage_records', 'true', { transient: false });
      await runWithin(id, 30_000);
      expect(await job(id)).toMatchObject({ status: 'queued', failedAttempts: 1, attempt: 0, workerId: null });
      expect(await messages(id)).toContainEqual(expect.stringMatching(/^requeued after failed attempt 1 of 2: could not mark the job running: .*injected fault on usage_records/));
    }, 60_000);

    it('a registration the database cannot read leaves the job waiting, the failed attempt counted, not failed as an invalid spec', async () => {
      const id = await submit();
      // The job names a registered environment; the registry's table is out of reach (renamed away).
      await prisma.job.update({ where: { id }, data: { spec: { ...((await job(id)).spec as object), environment: { id: 'lab-game' } } } });
      await prisma.$executeRawUnsafe('ALTER TABLE environment_servers RENAME TO environment_servers_away');
      try {
        await runWithin(id, 30_000);
      } finally {
        await prisma.$executeRawUnsafe('ALTER TABLE environment_servers_away RENAME TO environment_servers');
      }
      expect(await job(id)).toMatchObject({ status: 'queued', failedAttempts: 1, attempt: 0, workerId: null, error: null });
      expect(await messages(id)).toContainEqual(expect.stringMatching(/^requeued after failed attempt 1 of 2: could not read the environment registration: /));
    }, 60_000);

    it('a final state the database will not take frees the slot at once and is stored when it does', async () => {
      const id = await submit();
      const finalState = await fault('job_events', "NEW.type = 'state' AND NEW.message LIKE 'succeeded%'", { transient: false });
      await runWithin(id, 30_000);
      expect(runner.settling).toBe(1);
      expect((await job(id)).status).toBe('running'); // nothing else can be true while the write fails
      expect(await finalState.hits()).toBeGreaterThan(0);
      await finalState.remove();
      await until(async () => runner.settling === 0, 15_000, 'the final state stored in the background');
      expect((await job(id)).status).toBe('succeeded');
      expect(await prisma.usageRecord.count({ where: { jobId: id, endedAt: null } })).toBe(0);
    }, 60_000);

    it('a job an earlier process of this worker left running goes back to the queue when the worker starts', async () => {
      const id = await submit();
      await prisma.job.update({ where: { id }, data: { status: 'running', workerId: 'runner-under-test', attempt: 1, controlRequest: 'cancel' } });
      const elsewhere = await submit();
      await prisma.job.update({ where: { id: elsewhere }, data: { status: 'running', workerId: 'another-worker', attempt: 1 } });
      expect(await runner.requeueLeftovers()).toBe(1);
      expect(await job(id)).toMatchObject({ status: 'queued', workerId: null, controlRequest: 'cancel' });
      expect(await messages(id)).toContain('requeued: worker runner-under-test restarted while it held the job');
      expect((await job(elsewhere)).status).toBe('running');
      // The cancel request is still obeyed when the job is sent again.
      await runWithin(id, 30_000);
      expect((await job(id)).status).toBe('cancelled');
    }, 60_000);
  });

  describe('with a long write deadline', () => {
    beforeAll(() => start({ STARLAB_WRITE_DEADLINE_MS: '120000' }), 30_000);
    afterAll(() => stop(), 30_000);

    it('a cancel while a write is being retried cancels the job', async () => {
      const id = await submit();
      const stepWrites = await fault('step_metrics', 'NEW.step >= 2', { transient: true });
      const run = runWithin(id, 30_000);
      await until(async () => (await stepWrites.hits()) > 0, 20_000, 'the step write failing');
      // What POST /v1/jobs/{id}/cancel does to a running job.
      await lifecycle.requestControl(id, 'cancel', outranked('cancel'), { message: 'cancel requested' });
      await run;
      expect(await job(id)).toMatchObject({ status: 'cancelled', controlRequest: null, failedAttempts: 0 });
    }, 60_000);

    it('an attempt that lost its job to another stops at its next write: its training is killed and nothing more of it is stored', async () => {
      const id = await submit({}, { steps: 400, checkpointEvery: 4 });
      const run = runWithin(id, 60_000);
      await until(async () => (await job(id)).currentStep >= 5, 30_000, 'five steps stored');
      // What a worker given the job by the queue does once this worker's lock expired.
      const taken = await lifecycle.start(id, TRANSITIONS.start, 1, { id: 'other-worker', device: 'cpu' }, () => 'running on other-worker (attempt 2)');
      expect(taken).toMatchObject({ token: { attempt: 2, workerId: 'other-worker' }, fromStep: 4 });
      const takenAt = (await prisma.jobEvent.findFirstOrThrow({ where: { jobId: id, message: 'running on other-worker (attempt 2)' } })).id;
      await run; // returned, and its training child has exited (runWithin: the slot is free)
      expect(await job(id)).toMatchObject({ status: 'running', attempt: 2, workerId: 'other-worker' });
      // Nothing of attempt 1 after the takeover: its results stop at the checkpoint attempt 2 resumes from, and no event of it follows.
      expect(await steps(id)).toEqual([0, 1, 2, 3, 4]);
      expect(await prisma.jobEvent.count({ where: { jobId: id, id: { gt: takenAt } } })).toBe(0);
      expect(await prisma.checkpoint.count({ where: { jobId: id, step: { gt: 4 } } })).toBe(0);
      // Attempt 1's usage was closed by the takeover (no heartbeat here: at the takeover), attempt 2's is open.
      const usage = await prisma.usageRecord.findMany({ where: { jobId: id }, orderBy: { attempt: 'asc' } });
      expect(usage.map((u) => [u.attempt, u.workerId, u.endedAt === null])).toEqual([[1, 'runner-under-test', false], [2, 'other-worker', true]]);
    }, 90_000);

    const ALWAYS_SPIKE = [{ detector: 'grad_norm_spike', threshold: 0, warmupSteps: 5 }];
    const rollbackJob = () => submit({ collapse: { action: 'rollback', rules: ALWAYS_SPIKE, rollback: { learningRateScale: 0.5, maxRollbacks: 2 } } }, { steps: 30, checkpointEvery: 2 });
    const rolledBack = "NEW.rollbacks > OLD.rollbacks";

    it('a rollback is retried like every write', async () => {
      const id = await rollbackJob();
      const rollbackWrites = await fault('jobs', rolledBack, { transient: true, times: 2, on: 'UPDATE' });
      await runWithin(id, 60_000);
      expect(await rollbackWrites.hits()).toBe(3); // two refused, the third stored
      const row = await job(id);
      expect(row).toMatchObject({ status: 'queued', rollbacks: 1, currentStep: 4, workerId: null });
      expect(await steps(id)).toEqual([0, 1, 2, 3, 4]);
      expect(await prisma.checkpoint.findMany({ where: { jobId: id }, select: { step: true }, orderBy: { step: 'asc' } })).toEqual([{ step: 0 }, { step: 2 }, { step: 4 }]);
    }, 90_000);

    it('a rollback that cannot be stored discards nothing until it is stored, in one transaction', async () => {
      const id = await rollbackJob();
      const rollbackWrites = await fault('jobs', rolledBack, { transient: false, on: 'UPDATE' });
      await runWithin(id, 60_000);
      expect(await rollbackWrites.hits()).toBeGreaterThan(0);
      // Still all there: the results after the target step go with the job's change or not at all.
      expect(await steps(id)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(await prisma.collapseWarning.count({ where: { jobId: id } })).toBe(1);
      await rollbackWrites.remove();
      await until(async () => (await job(id)).status === 'queued', 20_000, 'the rollback stored in the background');
      expect(await job(id)).toMatchObject({ rollbacks: 1, currentStep: 4 });
      expect(await steps(id)).toEqual([0, 1, 2, 3, 4]);
      expect(await prisma.collapseWarning.count({ where: { jobId: id } })).toBe(0);
    }, 90_000);
  });
});

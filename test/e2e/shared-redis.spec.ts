import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { PrivateRedis } from '../support/servers';
import { TestStack, tinyJob } from '../support/stack';

/**
 * Deployments that share one Redis, each with its own database and the default queue prefix
 * (docs/configuration.md): a Redis of the test's own, so nothing else's keys are in it.
 */
describe('two deployments sharing one Redis', () => {
  let redis: PrivateRedis | undefined;
  const stacks: TestStack[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.create();
  }, 30_000);
  afterAll(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await redis?.destroy();
  }, 60_000);

  async function deployment(options: { api?: 'process' } = {}): Promise<TestStack> {
    const stack = new TestStack({ redisUrl: redis!.url, queuePrefix: null, ...options });
    stacks.push(stack);
    return stack.start();
  }

  async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number, what: () => string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('never take each other’s jobs', async () => {
    const [a, b] = [await deployment(), await deployment()];
    const workerA = a.startWorker('worker-a');
    // B's worker announces a free slot, then freezes: B's scheduler sends B's job to the queue,
    // where only A's worker is taking jobs. With one shared namespace it would take it.
    const workerB = b.startWorker('worker-b');
    await until(async () => (await b.request('GET', '/v1/queue')).body.workers?.length === 1 && (await a.request('GET', '/v1/queue')).body.workers?.length === 1, 30_000, () => workerB.output + workerA.output);
    workerB.kill('SIGSTOP');
    const { body: bJob } = await b.request('POST', '/v1/jobs', { body: tinyJob({ steps: 2, name: 'b-job' }) });
    await b.waitForJob(bJob.id, (j) => j.status === 'queued' && j.queue?.position === 0, 15_000); // admitted: sent to the queue
    const { body: aJob } = await a.request('POST', '/v1/jobs', { body: tinyJob({ steps: 2, name: 'a-job' }) });
    expect(await a.waitForJob(aJob.id, (j) => ['succeeded', 'failed'].includes(j.status), 60_000)).toMatchObject({ status: 'succeeded', worker: 'worker-a' });
    // A's worker has had B's job in reach for the whole of A's job, and of a second one it took
    // from the queue after that (each take is an event that B's job was passed over).
    const { body: again } = await a.request('POST', '/v1/jobs', { body: tinyJob({ steps: 2, name: 'a-job-2' }) });
    expect(await a.waitForJob(again.id, (j) => ['succeeded', 'failed'].includes(j.status), 60_000)).toMatchObject({ status: 'succeeded', worker: 'worker-a' });
    expect(workerA.output).not.toMatch(/nothing to do/);
    expect((await b.request('GET', `/v1/jobs/${bJob.id}`)).body.status).toBe('queued');

    workerB.kill('SIGCONT');
    expect(await b.waitForJob(bJob.id, (j) => ['succeeded', 'failed'].includes(j.status), 60_000)).toMatchObject({ status: 'succeeded', worker: 'worker-b', attempt: 1 });
    expect(workerB.output).not.toMatch(/nothing to do/);
  }, 150_000);

  it('refuse a prefix that another deployment holds', async () => {
    const [a, b] = [await deployment(), await deployment()];
    const aPrefix = (await claims(redis!.url)).get((await a.prisma.deployment.findFirstOrThrow()).id);
    expect(aPrefix).toMatch(/^starlab-[0-9a-f]{12}$/);
    const intruder = b.startWorker('intruder', { STARLAB_QUEUE_PREFIX: aPrefix! });
    expect(await intruder.exited).toBe(1);
    expect(intruder.output).toContain(`STARLAB_QUEUE_PREFIX "${aPrefix}" is in use on this Redis by another deployment`);
  }, 60_000);

  it('take back their jobs queued under the old shared prefix, and leave others’ there', async () => {
    const stack = await deployment({ api: 'process' });
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 2, name: 'queued-before-upgrade' }) });
    await stack.stopApi();
    // What the previous version left: the job sent under `starlab`, and another deployment's job there too.
    const database = new Client({ connectionString: stack.database.url });
    await database.connect();
    await database.query(`UPDATE jobs SET dispatched_at = now(), dispatched_device = 'cpu' WHERE id = $1`, [job.id]);
    await database.end();
    const connection = new IORedis(redis!.url, { maxRetriesPerRequest: null });
    const legacy = new Queue('training-cpu', { connection, prefix: 'starlab' });
    const foreign = randomUUID();
    try {
      for (const jobId of [job.id, foreign]) await legacy.add('train', { jobId }, { jobId, removeOnComplete: true, removeOnFail: true });
      await stack.startApi();
      await until(async () => (await legacy.getJob(job.id)) === undefined, 15_000, () => stack.api!.output.slice(-3000));
      // The API logs the move after taking the job out of the old queue, and its output arrives
      // through a pipe: the line may come a moment after the job is gone.
      await until(async () => /moving 1 job\(s\) queued under the old shared prefix/.test(stack.api!.output), 5_000, () => stack.api!.output.slice(-3000));
      stack.startWorker('after-upgrade');
      expect(await stack.waitForJob(job.id, (j) => ['succeeded', 'failed'].includes(j.status), 60_000)).toMatchObject({ status: 'succeeded', worker: 'after-upgrade' });
      expect((await legacy.getJob(foreign))?.data).toEqual({ jobId: foreign });
    } finally {
      await legacy.obliterate({ force: true }).catch(() => undefined);
      await legacy.close();
      connection.disconnect();
    }
  }, 120_000);
});

/** The namespace claims in a Redis (`<prefix>:deployment` → database identity), by identity. */
async function claims(url: string): Promise<Map<string, string>> {
  const client = new IORedis(url);
  try {
    const keys = await client.keys('*:deployment');
    const owners = await Promise.all(keys.map((key) => client.get(key)));
    return new Map(keys.map((key, i) => [owners[i]!, key.slice(0, -':deployment'.length)]));
  } finally {
    client.disconnect();
  }
}

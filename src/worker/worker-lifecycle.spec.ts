import type { AppConfig } from '../config/config';
import type { QueueRepository } from '../repositories/queue.repository';
import type { WorkerRepository } from '../repositories/worker.repository';
import type { EvaluationRunnerService } from './evaluation-runner.service';
import type { JobRunnerService } from './job-runner.service';
import { WorkerLifecycle } from './worker-lifecycle';

jest.mock('../training/backend', () => ({ initBackend: async () => 'cpu', shareCoresAmong: () => undefined }));

const config = { worker: { name: 'w1', backend: 'cpu', device: 'cpu', slots: 1, heartbeatMs: 100 } } as unknown as AppConfig;

/** The worker's lifecycle with its repositories mocked: what it gives back at start, and what a dead queue consumer does. */
describe('WorkerLifecycle', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function lifecycle() {
    let stopConsumer: (value?: unknown) => void = () => undefined;
    let running = true;
    const consumer = {
      run: jest.fn(() => new Promise((resolve) => (stopConsumer = resolve)).then(() => void (running = false))),
      isRunning: () => running,
      close: jest.fn(async () => undefined),
    };
    const order: string[] = [];
    const queue = { consumeTraining: jest.fn(async () => (order.push('consume'), consumer)) } as unknown as QueueRepository;
    const workers = { heartbeat: jest.fn(async () => void order.push('heartbeat')), remove: jest.fn(async () => undefined) } as unknown as WorkerRepository;
    const runner = { requeueLeftovers: jest.fn(async () => (order.push('requeue leftovers'), 0)), running: 0, stopAll: jest.fn() } as unknown as JobRunnerService;
    const evaluations = { reclaim: jest.fn(async () => (order.push('reclaim evaluations'), 0)), start: jest.fn(), stop: jest.fn() } as unknown as EvaluationRunnerService;
    return { service: new WorkerLifecycle(queue, workers, runner, evaluations, config), workers, order, stopConsumer: () => stopConsumer() };
  }

  it('gives back what an earlier process of its name held before its first heartbeat', async () => {
    const { service, order } = lifecycle();
    await service.start();
    expect(order).toEqual(['requeue leftovers', 'reclaim evaluations', 'consume', 'heartbeat']);
  });

  it('exits, and stops heart-beating, when its queue consumer stops on its own', async () => {
    const { service, workers, stopConsumer } = lifecycle();
    await service.start();
    await jest.advanceTimersByTimeAsync(500);
    const beats = (workers.heartbeat as jest.Mock).mock.calls.length;
    expect(beats).toBe(1 + 5);
    stopConsumer();
    await expect(service.fatal).resolves.toBe('the queue consumer stopped');
    await jest.advanceTimersByTimeAsync(1000);
    expect((workers.heartbeat as jest.Mock).mock.calls.length).toBe(beats);
  });

  it('does not treat its own shutdown as fatal', async () => {
    const { service, stopConsumer } = lifecycle();
    await service.start();
    await service.stop();
    stopConsumer();
    const settled = await Promise.race([service.fatal.then(() => 'fatal'), jest.advanceTimersByTimeAsync(1000).then(() => 'not fatal')]);
    expect(settled).toBe('not fatal');
  });
});

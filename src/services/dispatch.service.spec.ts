import type { AppConfig } from '../config/config';
import type { SchedulingRepository } from '../repositories/scheduling.repository';
import { DispatchService } from './dispatch.service';

/** DispatchService.explain's copy of the plan, with the scheduling rows faked: when it reads, and when a request waits for the read. */
describe('DispatchService.explain', () => {
  let now: number;
  let reads: number;
  let finish: (() => void)[];
  let service: DispatchService;

  beforeEach(() => {
    now = 1_000_000;
    reads = 0;
    finish = [];
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const scheduling = {
      state: () => {
        reads++;
        return new Promise((resolve) => finish.push(() => resolve({ now: new Date(now), pending: [], active: [], workers: [], owners: [], usage: [] })));
      },
    } as unknown as SchedulingRepository;
    const config = { queueViewMs: 1000, dispatchIntervalMs: 1000, scheduling: { maxRunningJobs: 4, fairShareHalfLifeS: 3600, workerStaleMs: 20_000 } } as unknown as AppConfig;
    service = new DispatchService({} as never, {} as never, {} as never, scheduling, {} as never, config);
  });
  afterEach(() => jest.restoreAllMocks());

  const settled = async <T>(promise: Promise<T>) => {
    let done = false;
    void promise.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it('serves the copy within the bound, and past three quarters of it starts the next read without waiting for it', async () => {
    const first = service.explain();
    finish.shift()!();
    const plan = await first;
    expect(reads).toBe(1);

    now += 700; // under ¾ of the bound: the copy, no read
    expect(await service.explain()).toBe(plan);
    expect(reads).toBe(1);

    now += 100; // 800 ms: the copy at once, and a read begins behind it
    const served = service.explain();
    expect(await settled(served)).toBe(true);
    expect(await served).toBe(plan);
    expect(reads).toBe(2);
    expect(await service.explain()).toBe(plan); // one read in flight at a time
    expect(reads).toBe(2);

    finish.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    const next = await service.explain();
    expect(next).not.toBe(plan);
    expect(next.readAt).toBe(now);
  });

  it('past the bound, a request waits for the read', async () => {
    const first = service.explain();
    finish.shift()!();
    await first;
    now += 1001;
    const waiting = service.explain();
    expect(await settled(waiting)).toBe(false);
    expect(reads).toBe(2);
    finish.shift()!();
    expect((await waiting).readAt).toBe(now);
  });

  it('does not keep a background read that a change through this replica overtook', async () => {
    const first = service.explain();
    finish.shift()!();
    await first;
    now += 800;
    await service.explain(); // starts the background read
    service.changed(); // e.g. a pause: the copy is dropped, the read in flight no longer counts
    finish.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    const after = service.explain();
    expect(reads).toBe(3); // the dropped copy is read again
    finish.shift()!();
    await after;
  });
});

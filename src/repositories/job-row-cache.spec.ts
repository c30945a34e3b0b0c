import { JobRowCache } from './job-row-cache';
import type { JobRow } from './job.repository';

const row = (id: string, status = 'queued') => ({ id, status }) as unknown as JobRow;

describe('JobRowCache', () => {
  let now: number;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  it('serves a row from memory while it is younger than the bound, then reads again', async () => {
    const cache = new JobRowCache({ jobViewMs: 1000 });
    const load = jest.fn(async () => row('a'));
    await cache.read('a', load);
    now += 999;
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(1);
    now += 1; // 1000 ms after the read began: no longer within the bound
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('reads every time with a bound of 0, and never keeps a missing job', async () => {
    const off = new JobRowCache({ jobViewMs: 0 });
    const load = jest.fn(async () => row('a'));
    await off.read('a', load);
    await off.read('a', load);
    expect(load).toHaveBeenCalledTimes(2);
    const cache = new JobRowCache({ jobViewMs: 1000 });
    const missing = jest.fn(async () => null);
    expect(await cache.read('b', missing)).toBeNull();
    expect(await cache.read('b', missing)).toBeNull();
    expect(missing).toHaveBeenCalledTimes(2);
  });

  it('never keeps a running job’s row: it changes with every step', async () => {
    const cache = new JobRowCache({ jobViewMs: 60_000 });
    const load = jest.fn(async () => row('a', 'running'));
    await cache.read('a', load);
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('shares one read among concurrent misses of a job', async () => {
    const cache = new JobRowCache({ jobViewMs: 1000 });
    let finish: (r: JobRow) => void = () => undefined;
    const load = jest.fn(() => new Promise<JobRow>((resolve) => (finish = resolve)));
    const reads = [cache.read('a', load), cache.read('a', load), cache.read('a', load)];
    finish(row('a'));
    expect(await Promise.all(reads)).toEqual([row('a'), row('a'), row('a')]);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('forgets a row once a write to its job is done, even a write that failed', async () => {
    const cache = new JobRowCache({ jobViewMs: 60_000 });
    await cache.read('a', async () => row('a', 'queued'));
    await cache.dropAfter('a', async () => 'written');
    expect(await cache.read('a', async () => row('a', 'paused'))).toEqual(row('a', 'paused'));
    await expect(cache.dropAfter(['a'], async () => Promise.reject(new Error('commit lost')))).rejects.toThrow('commit lost');
    expect(await cache.read('a', async () => row('a', 'cancelled'))).toEqual(row('a', 'cancelled'));
  });

  it('does not keep a read that began before a drop: it may hold the row as it was before the write', async () => {
    const cache = new JobRowCache({ jobViewMs: 60_000 });
    let finish: (r: JobRow) => void = () => undefined;
    const before = cache.read('a', () => new Promise<JobRow>((resolve) => (finish = resolve)));
    cache.drop(['a']); // a write committed while that read was in flight
    finish(row('a', 'queued'));
    expect(await before).toEqual(row('a', 'queued'));
    // The next read goes to Postgres, and sees the write.
    expect(await cache.read('a', async () => row('a', 'running'))).toEqual(row('a', 'running'));
  });

  it('keeps a read in flight while other jobs are written (a dispatch pass that admits nothing drops no row)', async () => {
    const cache = new JobRowCache({ jobViewMs: 60_000 });
    let finish: (r: JobRow) => void = () => undefined;
    const reading = cache.read('a', () => new Promise<JobRow>((resolve) => (finish = resolve)));
    cache.drop([]);
    cache.drop(['b']);
    finish(row('a'));
    await reading;
    const load = jest.fn(async () => row('a', 'running'));
    expect(await cache.read('a', load)).toEqual(row('a'));
    expect(load).not.toHaveBeenCalled();
  });

  it('keeps at most 10,000 rows, dropping the oldest first', async () => {
    const cache = new JobRowCache({ jobViewMs: 60_000 });
    for (let i = 0; i <= 10_000; i++) await cache.read(`j${i}`, async () => row(`j${i}`));
    const load = jest.fn(async (id: string) => row(id));
    await cache.read('j1', () => load('j1'));
    await cache.read('j0', () => load('j0'));
    expect(load.mock.calls.map(([id]) => id)).toEqual(['j0']);
  });
});

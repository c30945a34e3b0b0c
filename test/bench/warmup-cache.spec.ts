import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchWarmupStore } from '../../bench/warmup-cache';

describe('bench warm-up cache', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warmups-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives back what was put under the same key, in one file and no temporary left', () => {
    const store = benchWarmupStore(join(dir, 'nested'))!;
    expect(store.get('k1')).toBeUndefined();
    store.put('k1', new Uint8Array([1, 2, 3]));
    expect([...store.get('k1')!]).toEqual([1, 2, 3]);
    expect(store.get('k2')).toBeUndefined();
    expect(readdirSync(join(dir, 'nested'))).toEqual([expect.stringMatching(/^[0-9a-f]{32}\.warmup$/)]);
    // A second store over the same folder (another bench process) finds it too.
    expect([...benchWarmupStore(join(dir, 'nested'))!.get('k1')!]).toEqual([1, 2, 3]);
  });

  it('is off when asked', () => {
    expect(benchWarmupStore('off')).toBeUndefined();
  });
});

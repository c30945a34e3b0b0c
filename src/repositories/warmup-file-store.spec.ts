import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WarmupFileStore } from './warmup-file-store';

describe('WarmupFileStore', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warmups-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const source = (text: string) => {
    const root = mkdtempSync(join(dir, 'src-'));
    writeFileSync(join(root, 'a.ts'), text);
    return root;
  };
  const backdate = (folder: string) => {
    const past = new Date(Date.now() - 100_000);
    for (const name of readdirSync(folder)) utimesSync(join(folder, name), past, past);
  };

  it('gives back what was put, to another store over the same folder, and keeps the most recently used', () => {
    const root = source('v1');
    const store = new WarmupFileStore(join(dir, 'cache'), { maxEntries: 2, sourceRoot: root });
    expect(store.get('k1')).toBeUndefined();
    store.put('k1', new Uint8Array([1]));
    store.put('k2', new Uint8Array([2]));
    expect([...new WarmupFileStore(join(dir, 'cache'), { maxEntries: 2, sourceRoot: root }).get('k2')!]).toEqual([2]);
    backdate(join(dir, 'cache'));
    expect([...store.get('k1')!]).toEqual([1]); // used now: k2 is the least recently used
    store.put('k3', new Uint8Array([3]));
    expect(store.get('k2')).toBeUndefined();
    expect([...store.get('k1')!]).toEqual([1]);
    expect([...store.get('k3')!]).toEqual([3]);
    expect(readdirSync(join(dir, 'cache'))).toHaveLength(2); // no temporary file left either
  });

  it('does not serve an entry written by other training code', () => {
    new WarmupFileStore(join(dir, 'cache'), { maxEntries: 8, sourceRoot: source('v1') }).put('k', new Uint8Array([1]));
    expect(new WarmupFileStore(join(dir, 'cache'), { maxEntries: 8, sourceRoot: source('v2') }).get('k')).toBeUndefined();
  });

  it('logs instead of throwing when its folder cannot be written or read', () => {
    writeFileSync(join(dir, 'file'), 'not a folder');
    const logs: string[] = [];
    const store = new WarmupFileStore(join(dir, 'file', 'cache'), { maxEntries: 8, sourceRoot: source('v1'), log: (m) => void logs.push(m) });
    expect(() => store.put('k', new Uint8Array([1]))).not.toThrow();
    expect(store.get('k')).toBeUndefined();
    expect(logs).toEqual([expect.stringContaining('cannot write'), expect.stringContaining('cannot read')]);
  });
});

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { WarmupStore } from '../training/warmup-store';

export interface WarmupFileStoreOptions {
  /** Entries kept; past it the least recently used go first. */
  maxEntries: number;
  /** Told when the folder cannot be read or written: the job then trains its warm-up itself. */
  log?: (message: string) => void;
  /** The source whose digest salts every name (default: the training library's folder, .ts or built .js). */
  sourceRoot?: string;
}

/**
 * The one owner of the warm-up store's files (src/training/warmup-store.ts): one file per
 * warm-up in a local folder, named by a digest of its key and of the training library's source,
 * so that a change to the code that trains a warm-up makes the old entries unreachable instead of
 * silently reused. Writes go to a temporary file renamed into place, so concurrent jobs never
 * read half an entry. A folder that cannot be read or written only costs the time the store
 * would have saved: nothing here throws.
 */
export class WarmupFileStore implements WarmupStore {
  private readonly log: (message: string) => void;
  private readonly code: string;

  constructor(
    private readonly dir: string,
    private readonly options: WarmupFileStoreOptions,
  ) {
    this.log = options.log ?? (() => undefined);
    this.code = sourceDigest(options.sourceRoot ?? join(__dirname, '..', 'training'));
  }

  get(key: string): Uint8Array | undefined {
    try {
      const bytes = new Uint8Array(readFileSync(this.file(key)));
      const now = new Date();
      utimesSync(this.file(key), now, now);
      return bytes;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`warm-up store: cannot read ${this.dir}: ${(error as Error).message}`);
      return undefined;
    }
  }

  put(key: string, bytes: Uint8Array): void {
    try {
      mkdirSync(this.dir, { recursive: true });
      const temporary = `${this.file(key)}.${process.pid}.tmp`;
      writeFileSync(temporary, bytes);
      renameSync(temporary, this.file(key));
      evictBeyond(this.dir, this.options.maxEntries);
    } catch (error) {
      this.log(`warm-up store: cannot write ${this.dir}: ${(error as Error).message}`);
    }
  }

  private file(key: string): string {
    return join(this.dir, `${createHash('sha256').update(`${this.code}:${key}`).digest('hex').slice(0, 32)}.warmup`);
  }
}

/**
 * Deletes the least recently used entries past `maxEntries` (a hit touches its file). Another
 * process may evict or replace the same files meanwhile: a file already gone is skipped.
 */
function evictBeyond(dir: string, maxEntries: number): void {
  const usedAt = (path: string) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return null;
    }
  };
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.warmup'))
    .map((name) => ({ path: join(dir, name), used: usedAt(join(dir, name)) }))
    .filter((entry): entry is { path: string; used: number } => entry.used !== null)
    .sort((a, b) => b.used - a.used);
  for (const old of entries.slice(maxEntries)) rmSync(old.path, { force: true });
}

/** A digest of the library's source files (tests and declarations left out), read once per store. */
function sourceDigest(root: string): string {
  const hash = createHash('sha256');
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(entry.name) && !/\.(spec|d)\.ts$/.test(entry.name)) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(root);
  return hash.digest('hex');
}

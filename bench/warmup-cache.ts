/**
 * The benches' warm-up store (src/training/warmup-store.ts) on disk: a preset comparison, a
 * collapse suite's learning-rate sweep or a second look at one cell trains each warm-up once.
 * On Sokoban from demonstrations that is half an hour of a core per run.
 *
 * Entries live outside the work tree, in `STARLAB_WARMUP_CACHE` (default ~/.cache/starlab/warmups;
 * `off` disables it), so they outlast a checkout. Each name digests the warm-up's key together with
 * the source of the training library, so any change to the code that trains a warm-up makes the
 * old entries unreachable instead of silently reused. Writes go to a temporary file and are renamed
 * into place, so parallel runs never read half an entry.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import type { WarmupStore } from '../src/training/warmup-store';

const TRAINING_SOURCE = join(__dirname, '..', 'src', 'training');

/** A digest of every non-test source file of the training library. */
function sourceDigest(root = TRAINING_SOURCE): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(root);
  return hash.digest('hex');
}

/** The store the benches use, or undefined when `STARLAB_WARMUP_CACHE=off`. */
export function benchWarmupStore(dir = process.env.STARLAB_WARMUP_CACHE ?? join(homedir(), '.cache', 'starlab', 'warmups')): WarmupStore | undefined {
  if (dir === 'off') return undefined;
  const code = sourceDigest();
  const file = (key: string) => join(dir, `${createHash('sha256').update(`${code}:${key}`).digest('hex').slice(0, 32)}.warmup`);
  return {
    get: (key) => (existsSync(file(key)) ? new Uint8Array(readFileSync(file(key))) : undefined),
    put: (key, bytes) => {
      mkdirSync(dir, { recursive: true });
      const temporary = `${file(key)}.${process.pid}.tmp`;
      writeFileSync(temporary, bytes);
      renameSync(temporary, file(key));
    },
  };
}

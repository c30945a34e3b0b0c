/**
 * The benches' warm-up store (src/repositories/warmup-file-store.ts): a preset comparison, a collapse
 * suite's learning-rate sweep or a second look at one cell trains each warm-up once. On Sokoban
 * from demonstrations that is half an hour of a core per run.
 *
 * Entries live outside the work tree, in `STARLAB_WARMUP_CACHE` (default ~/.cache/starlab/warmups;
 * `off` disables it), so they outlast a checkout; names digest the training library's source, so
 * a change to that code never serves an old warm-up.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { WarmupFileStore } from '../src/repositories/warmup-file-store';
import type { WarmupStore } from '../src/training/warmup-store';

/** Enough for every warm-up of the learning table and the collapse suite (a few MB each at most). */
const BENCH_ENTRIES = 256;

/** The store the benches use, or undefined when `STARLAB_WARMUP_CACHE=off`. */
export function benchWarmupStore(dir = process.env.STARLAB_WARMUP_CACHE ?? join(homedir(), '.cache', 'starlab', 'warmups')): WarmupStore | undefined {
  if (dir === 'off') return undefined;
  return new WarmupFileStore(dir, { maxEntries: BENCH_ENTRIES, log: (message) => process.stderr.write(`${message}\n`) });
}

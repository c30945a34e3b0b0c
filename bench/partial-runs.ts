/**
 * Runs that have not finished: a bench run keeps its trainer's checkpoint and what it has
 * recorded so far every few steps, so that a run stopped part-way (a process killed, a machine
 * given back) resumes where it stopped instead of from the start. A 200-step Sokoban run needs
 * two to three hours of a core on a 2-core machine, longer than a working session there; its
 * partial file can be handed to the next one (`git add -f bench/results/partial/<file>`).
 *
 * The trainer's checkpoint holds everything a run needs to go on bit-for-bit (weights, optimiser
 * moments, RNG states, the collapse monitor, the replay buffer: src/training/checkpoint.ts), so a
 * resumed run ends as the uninterrupted one would. A file is named by a digest of the run's id
 * (its key and the digest of the spec it trains) and records that id, so it is only ever resumed
 * by the same job. Files live in `STARLAB_PARTIAL_RUNS` (default bench/results/partial; `off`
 * disables them) and are deleted when their run is stored.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './runs';

/** What a run has recorded up to its checkpoint (bench/runs.ts's result so far; `seconds` over every process that trained it), and the step it was taken after. */
export type PartialProgress = { step: number } & Required<Pick<BenchResult<unknown>, 'curve' | 'warnings' | 'monitor' | 'warmupReused' | 'seconds' | 'resumedAt'>>;

export interface PartialRun {
  progress: PartialProgress;
  checkpoint: Uint8Array;
}

/** Checkpoint every this many RL steps: a lost process repeats at most this many. */
export const PARTIAL_EVERY = 10;

export class PartialRuns {
  constructor(readonly dir: string) {}

  /** The run's last saved state, or null when none was saved (or the file is not this run's). */
  load(id: string): PartialRun | null {
    const path = this.path(id);
    if (!existsSync(path)) return null;
    const bytes = readFileSync(path);
    const headerLength = bytes.readUInt32LE(0);
    const header = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as { id: string; progress: PartialProgress };
    if (header.id !== id) return null;
    return { progress: header.progress, checkpoint: new Uint8Array(bytes.subarray(4 + headerLength)) };
  }

  /** Replaces the run's saved state; a reader sees the old file or the new one, never a mix. */
  save(id: string, progress: PartialProgress, checkpoint: Uint8Array): void {
    mkdirSync(this.dir, { recursive: true });
    const header = Buffer.from(JSON.stringify({ id, progress }), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length, 0);
    const path = this.path(id);
    writeFileSync(`${path}.tmp`, Buffer.concat([length, header, checkpoint]));
    renameSync(`${path}.tmp`, path);
  }

  remove(id: string): void {
    rmSync(this.path(id), { force: true });
  }

  path(id: string): string {
    return join(this.dir, `${createHash('sha256').update(id).digest('hex').slice(0, 16)}.partial`);
  }
}

/** The benches' partial runs, or undefined when `STARLAB_PARTIAL_RUNS=off`. */
export function benchPartialRuns(dir = process.env.STARLAB_PARTIAL_RUNS ?? join('bench', 'results', 'partial')): PartialRuns | undefined {
  return dir === 'off' ? undefined : new PartialRuns(dir);
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { JobRow } from './job.repository';

/** Rows kept at most; past it the oldest go first (a GET of an evicted job reads Postgres again). */
const MAX_ROWS = 10_000;

/**
 * Job rows as GET /v1/jobs/{id} serves them, kept at most STARLAB_JOB_VIEW_MS (1 s by default)
 * from when their read began (docs/performance.md). Every write to a job through this process
 * drops its row once the write is done (the repositories that write jobs call `dropAfter`), so a
 * caller's own change shows on their next read here; what the workers and other replicas change
 * shows within the bound. Concurrent misses of one job share one read, and a read that began
 * before a drop is not kept, so it cannot put back the row the drop removed.
 *
 * A running job's row is never kept: it changes with every step, and clients that follow a run
 * read it beside its event stream, which a kept row would lag. Queued and finished rows change
 * rarely, and mostly through this API.
 */
@Injectable()
export class JobRowCache {
  private readonly rows = new Map<string, { readAt: number; row: JobRow }>();
  /** Reads in flight; a drop of their job marks them `void`, and a void read is not kept. */
  private readonly reading = new Map<string, { read: Promise<JobRow | null>; void: boolean }>();
  private readonly ttlMs: number;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'jobViewMs'>) {
    this.ttlMs = config.jobViewMs;
  }

  /** The job's row, from memory while it is younger than the bound, else from `load`. */
  read(id: string, load: () => Promise<JobRow | null>): Promise<JobRow | null> {
    if (this.ttlMs === 0) return load();
    const kept = this.rows.get(id);
    if (kept && Date.now() - kept.readAt < this.ttlMs) return Promise.resolve(kept.row);
    const pending = this.reading.get(id);
    if (pending) return pending.read;
    const readAt = Date.now();
    const entry = { read: load(), void: false };
    this.reading.set(id, entry);
    entry.read = entry.read
      .then((row) => {
        if (row && row.status !== 'running' && !entry.void) this.keep(id, { readAt, row });
        return row;
      })
      .finally(() => {
        if (this.reading.get(id) === entry) this.reading.delete(id);
      });
    return entry.read;
  }

  /** Runs a write to these jobs, then forgets their rows, whether the write succeeded or not. */
  async dropAfter<T>(ids: string | readonly string[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.drop(typeof ids === 'string' ? [ids] : ids);
    }
  }

  drop(ids: readonly string[]): void {
    for (const id of ids) {
      this.rows.delete(id);
      const pending = this.reading.get(id);
      if (pending) pending.void = true;
      this.reading.delete(id);
    }
  }

  private keep(id: string, entry: { readAt: number; row: JobRow }): void {
    this.rows.delete(id);
    this.rows.set(id, entry);
    if (this.rows.size > MAX_ROWS) this.rows.delete(this.rows.keys().next().value as string);
  }
}

/** For code that builds repositories by hand (benches, tests of one repository): keeps nothing. */
export const NO_JOB_ROW_CACHE = new JobRowCache({ jobViewMs: 0 });

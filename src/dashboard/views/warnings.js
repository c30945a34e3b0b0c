import { api } from '../api.js';
import { TERMINAL } from '../dom.js';

/** Warnings of jobs, fetched once for finished jobs and again for live ones. */
export class WarningCache {
  constructor() {
    /** @type {Map<string, {status: string, data: any[]}>} */
    this.byJob = new Map();
  }

  /** @param {{id: string, status: string}[]} jobs */
  async load(jobs) {
    await Promise.all(
      jobs.map(async (job) => {
        const cached = this.byJob.get(job.id);
        if (cached && TERMINAL.has(cached.status) && cached.status === job.status) return;
        if (job.status === 'queued' && cached) return;
        try {
          const { data } = await api(`/v1/jobs/${job.id}/warnings`);
          this.byJob.set(job.id, { status: job.status, data });
        } catch {
          /* shown as unknown; the next refresh tries again */
        }
      }),
    );
  }

  /** Counts by severity. */
  counts(jobId) {
    const counts = { critical: 0, warning: 0, info: 0 };
    for (const w of this.byJob.get(jobId)?.data ?? []) counts[w.severity]++;
    return counts;
  }
}

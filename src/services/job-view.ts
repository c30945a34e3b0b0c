import type { JobView } from '../contracts/jobs.dto';
import type { JobRow } from '../repositories/job.repository';
import { jobProgress } from './job-progress';

/** The API's picture of a job row (a running job's pace is added by JobService from its readings). */
export function toJobView(job: JobRow, queue: JobView['queue'] = null): JobView {
  return {
    id: job.id,
    name: job.name,
    owner: { id: job.owner.id, name: job.owner.name },
    status: job.status,
    priority: job.priority,
    device: job.device,
    labels: job.labels as Record<string, string>,
    progress: job.progress,
    currentStep: job.currentStep,
    totalSteps: job.totalSteps,
    attempt: job.attempt,
    backend: job.backend,
    worker: job.workerId,
    error: job.error,
    controlRequest: (job.controlRequest as JobView['controlRequest']) ?? null,
    latestMetrics: (job.latestMetrics as Record<string, number> | null) ?? null,
    queue,
    spec: job.spec as Record<string, unknown>,
    ...jobProgress(job, undefined, new Date()),
    experiment: job.experimentId !== null && job.experimentCell !== null ? { id: job.experimentId, cell: job.experimentCell } : null,
    archivedAt: job.archivedAt?.toISOString() ?? null,
    purgedAt: job.purgedAt?.toISOString() ?? null,
    forkedFrom: job.parentJobId !== null && job.parentStep !== null ? { jobId: job.parentJobId, step: job.parentStep } : null,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}

/** Opaque page cursor over (createdAt, id). */
export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } | null {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    return typeof id === 'string' && !Number.isNaN(date.getTime()) ? { createdAt: date, id } : null;
  } catch {
    return null;
  }
}

import { Injectable } from '@nestjs/common';
import { JobStatus, Prisma } from '../generated/prisma/client';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import { PrismaService } from './prisma.service';

/** Job statuses nothing runs from again by itself: the only ones that can be archived or purged. */
export const ENDED_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Archiving (hiding) ended jobs, and purging what they produced. */
@Injectable()
export class ArchiveRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * Marks the job archived if it has ended and is not archived yet, with an audit event; 'active'
   * when it has not ended (it may be running), 'already' when it was archived.
   */
  archive(jobId: string, actor: string): Promise<'archived' | 'already' | 'active'> {
    return this.cache.dropAfter(jobId, () =>
      this.prisma.$transaction(async (tx) => {
        const [job] = await tx.$queryRaw<{ status: JobStatus; archived_at: Date | null }[]>`SELECT status, archived_at FROM jobs WHERE id = ${jobId}::uuid FOR UPDATE`;
        if (!job || !ENDED_STATUSES.includes(job.status)) return 'active';
        if (job.archived_at) return 'already';
        await tx.job.update({ where: { id: jobId }, data: { archivedAt: new Date() } });
        await tx.jobEvent.create({ data: { jobId, type: 'audit', message: `archived by ${actor}`, data: { action: 'archive', actor } } });
        return 'archived';
      }),
    );
  }

  /**
   * Deletes what the ended job produced (step metrics, trajectories, checkpoints, warnings,
   * evaluations and its events) and keeps the row, archived and marked purged, for usage
   * accounting and fork lineage; one transaction, under the job's row lock so that no rollback
   * can requeue it meanwhile. 'active' when it has not ended.
   */
  purge(jobId: string, actor: string): Promise<'purged' | 'active'> {
    return this.cache.dropAfter(jobId, () =>
      this.prisma.$transaction(async (tx) => {
        const [job] = await tx.$queryRaw<{ status: JobStatus }[]>`SELECT status FROM jobs WHERE id = ${jobId}::uuid FOR UPDATE`;
        if (!job || !ENDED_STATUSES.includes(job.status)) return 'active';
        const of = { jobId };
        await tx.stepMetric.deleteMany({ where: of });
        await tx.trajectory.deleteMany({ where: of });
        await tx.collapseWarning.deleteMany({ where: of });
        await tx.evaluation.deleteMany({ where: of });
        await tx.checkpoint.deleteMany({ where: of });
        await tx.jobEvent.deleteMany({ where: of });
        const now = new Date();
        await tx.job.update({ where: { id: jobId }, data: { latestMetrics: Prisma.DbNull, archivedAt: now, purgedAt: now } });
        await tx.jobEvent.create({ data: { jobId, type: 'audit', message: `purged by ${actor}: its results and checkpoints are deleted`, data: { action: 'purge', actor } } });
        return 'purged';
      }),
    );
  }

  /** Ids and statuses of the experiment's jobs that have not ended. */
  activeJobsOf(experimentId: string) {
    return this.prisma.job.findMany({ where: { experimentId, status: { notIn: [...ENDED_STATUSES] } }, select: { id: true, status: true } });
  }
}

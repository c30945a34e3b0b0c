import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { Admit, NewJob, admitUnderLock } from './job.repository';
import { JobRowCache, NO_JOB_ROW_CACHE } from './job-row-cache';
import { PrismaService } from './prisma.service';

export type ExperimentRow = Prisma.ExperimentGetPayload<{ include: { owner: true } }>;

/** What an experiment shows of each of its jobs. */
export const EXPERIMENT_JOB_FIELDS = {
  id: true,
  name: true,
  status: true,
  spec: true,
  currentStep: true,
  totalSteps: true,
  experimentCell: true,
  archivedAt: true,
  dispatchedAt: true,
  ownerId: true,
  priority: true,
  device: true,
  createdAt: true,
} as const;
export type ExperimentJobRow = Prisma.JobGetPayload<{ select: typeof EXPERIMENT_JOB_FIELDS }>;

export interface NewExperiment {
  ownerId: string;
  name: string;
  base: Prisma.InputJsonValue;
  grid: Prisma.InputJsonValue;
  cells: Prisma.InputJsonValue;
  idempotencyKey: string | null;
  requestHash: string | null;
}

/** One evaluation reading of a run: the step and the success value of the job's evaluation series. */
export interface EvalReading {
  jobId: string;
  step: number;
  value: number;
}

/** Experiments and the links of their jobs. */
@Injectable()
export class ExperimentRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly cache: JobRowCache = NO_JOB_ROW_CACHE,
  ) {}

  /**
   * The experiment, its jobs and each job's first event, in one transaction: the jobs exist
   * together or not at all. `admit` sees the owner's queued jobs and quota first, under the lock
   * on the owner's row that single submissions take too (JobRepository.create), and throws to
   * refuse the whole experiment.
   */
  create(experiment: NewExperiment, jobs: (NewJob & { experimentCell: number })[], admit: Admit) {
    return this.prisma.$transaction(async (tx) => {
      await admitUnderLock(tx, experiment.ownerId, admit);
      const created = await tx.experiment.create({ data: experiment, include: { owner: true } });
      // A millisecond apart, in grid order: the scheduler takes a user's jobs oldest first, so the
      // runs start cell by cell, seed by seed, and list in that order.
      const at = created.createdAt.getTime();
      const rows = await tx.job.createManyAndReturn({
        data: jobs.map((job, i) => ({ ...job, experimentId: created.id, status: 'queued' as const, createdAt: new Date(at + i) })),
        select: EXPERIMENT_JOB_FIELDS,
      });
      await tx.jobEvent.createMany({ data: rows.map((job) => ({ jobId: job.id, type: 'state', message: `queued (experiment ${created.name})`, data: { status: 'queued', experimentId: created.id } })) });
      return { experiment: created, jobs: rows };
    });
  }

  findById(id: string): Promise<ExperimentRow | null> {
    return this.prisma.experiment.findUnique({ where: { id }, include: { owner: true } });
  }

  findByIdempotencyKey(ownerId: string, idempotencyKey: string): Promise<ExperimentRow | null> {
    return this.prisma.experiment.findUnique({ where: { ownerId_idempotencyKey: { ownerId, idempotencyKey } }, include: { owner: true } });
  }

  /** Newest first; `before` is the (createdAt, id) of the last row of the previous page. */
  list(filter: { ownerIds: string[] | null; archived: boolean; before?: { createdAt: Date; id: string }; limit: number }): Promise<ExperimentRow[]> {
    const where: Prisma.ExperimentWhereInput = {
      ...(filter.ownerIds ? { ownerId: { in: filter.ownerIds } } : {}),
      archivedAt: filter.archived ? { not: null } : null,
      ...(filter.before ? { OR: [{ createdAt: { lt: filter.before.createdAt } }, { createdAt: filter.before.createdAt, id: { lt: filter.before.id } }] } : {}),
    };
    return this.prisma.experiment.findMany({ where, include: { owner: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: filter.limit });
  }

  jobsOf(experimentIds: string[]): Promise<(ExperimentJobRow & { experimentId: string | null })[]> {
    return this.prisma.job.findMany({ where: { experimentId: { in: experimentIds } }, select: { ...EXPERIMENT_JOB_FIELDS, experimentId: true }, orderBy: [{ experimentCell: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] });
  }

  /**
   * The first of `names` each job reported at step 0 and at its last step (the evaluation after
   * the warm-up and after RL): two rows a job at most, only the values read.
   */
  async endpointReadings(jobIds: string[], names: readonly string[]): Promise<EvalReading[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ job_id: string; step: number; value: number | null }[]>`
      SELECT m.job_id, m.step, COALESCE(${Prisma.join(names.map((name) => Prisma.sql`(m.metrics->>${name})::float8`))}) AS value
      FROM step_metrics m JOIN jobs j ON j.id = m.job_id
      WHERE m.job_id = ANY(${jobIds}::uuid[]) AND (m.step = 0 OR m.step = j.total_steps)`;
    return rows.flatMap((row) => (row.value === null ? [] : [{ jobId: row.job_id, step: row.step, value: Number(row.value) }]));
  }

  /** Every step at which each job reported `name`, with its value. */
  async series(jobIds: string[], name: string): Promise<EvalReading[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ job_id: string; step: number; value: number }[]>`
      SELECT job_id, step, (metrics->>${name})::float8 AS value FROM step_metrics
      WHERE job_id = ANY(${jobIds}::uuid[]) AND metrics ? ${name} ORDER BY job_id, step`;
    return rows.map((row) => ({ jobId: row.job_id, step: row.step, value: Number(row.value) }));
  }

  setReferences(id: string, references: Prisma.InputJsonValue) {
    return this.prisma.experiment.update({ where: { id }, data: { references } });
  }

  /** Archives the experiment and every one of its jobs that is not archived yet; false if it already was. */
  async archive(id: string): Promise<boolean> {
    const jobIds = (await this.prisma.job.findMany({ where: { experimentId: id }, select: { id: true } })).map((j) => j.id);
    return this.cache.dropAfter(jobIds, () =>
      this.prisma.$transaction(async (tx) => {
        const { count } = await tx.experiment.updateMany({ where: { id, archivedAt: null }, data: { archivedAt: new Date() } });
        await tx.job.updateMany({ where: { experimentId: id, archivedAt: null }, data: { archivedAt: new Date() } });
        return count > 0;
      }),
    );
  }

  markPurged(id: string) {
    return this.prisma.experiment.update({ where: { id }, data: { purgedAt: new Date(), archivedAt: new Date() } });
  }
}

import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

export interface TrajectoryFilter {
  fromStep?: number;
  toStep?: number;
  success?: boolean;
  minReturn?: number;
  withText?: boolean;
  afterId?: bigint;
  limit: number;
}

/** What training produced, read: step metrics, trajectories, warnings, checkpoints (attempts write them through JobLifecycleRepository). */
@Injectable()
export class ResultsRepository {
  constructor(private readonly prisma: PrismaService) {}

  warnings(jobId: string, minSeverity?: 'info' | 'warning' | 'critical') {
    const severities = { info: ['info', 'warning', 'critical'], warning: ['warning', 'critical'], critical: ['critical'] } as const;
    return this.prisma.collapseWarning.findMany({
      where: { jobId, ...(minSeverity ? { severity: { in: [...severities[minSeverity]] } } : {}) },
      orderBy: [{ step: 'asc' }, { createdAt: 'asc' }],
    });
  }

  /** The newest checkpoint tagged healthy at or before `step` (rollback target). */
  latestHealthyCheckpoint(jobId: string, atOrBefore: number) {
    return this.prisma.checkpoint.findFirst({ where: { jobId, health: 'healthy', step: { lte: atOrBefore } }, orderBy: { step: 'desc' } });
  }

  /** A checkpoint of the job, without its bytes. */
  checkpointOf(jobId: string, checkpointId: string) {
    return this.prisma.checkpoint.findFirst({ where: { id: checkpointId, jobId }, select: { id: true, step: true, health: true } });
  }

  latestCheckpoint(jobId: string) {
    return this.prisma.checkpoint.findFirst({ where: { jobId }, orderBy: { step: 'desc' } });
  }

  /** The bytes of the job's checkpoint at `step` (what an attempt resumes from). */
  async checkpointBytesAt(jobId: string, step: number): Promise<Uint8Array | null> {
    return (await this.prisma.checkpoint.findUnique({ where: { jobId_step: { jobId, step } }, select: { bytes: true } }))?.bytes ?? null;
  }

  metrics(jobId: string, fromStep: number | undefined, toStep: number | undefined) {
    return this.prisma.stepMetric.findMany({
      where: { jobId, step: { gte: fromStep, lte: toStep } },
      orderBy: { step: 'asc' },
      select: { step: true, metrics: true },
    });
  }

  trajectories(jobId: string, filter: TrajectoryFilter) {
    return this.prisma.trajectory.findMany({
      where: {
        jobId,
        step: { gte: filter.fromStep, lte: filter.toStep },
        success: filter.success,
        return: filter.minReturn === undefined ? undefined : { gte: filter.minReturn },
        text: filter.withText ? { not: null } : undefined,
        id: filter.afterId === undefined ? undefined : { gt: filter.afterId },
      },
      orderBy: { id: 'asc' },
      take: filter.limit,
    });
  }

  /** The newest step that has trajectories, or null. */
  async latestTrajectoryStep(jobId: string): Promise<number | null> {
    return (await this.prisma.trajectory.aggregate({ where: { jobId }, _max: { step: true } }))._max.step;
  }

  /** The step of one of the job's trajectories (a page cursor), or null. */
  async trajectoryStep(jobId: string, id: bigint): Promise<number | null> {
    return (await this.prisma.trajectory.findFirst({ where: { jobId, id }, select: { step: true } }))?.step ?? null;
  }

  checkpoints(jobId: string) {
    return this.prisma.checkpoint.findMany({
      where: { jobId },
      orderBy: { step: 'asc' },
      select: { id: true, jobId: true, step: true, sizeBytes: true, health: true, createdAt: true },
    });
  }

  checkpointWithBytes(id: string) {
    return this.prisma.checkpoint.findUnique({ where: { id }, include: { job: { select: { ownerId: true, owner: { select: { teamId: true } } } } } });
  }
}

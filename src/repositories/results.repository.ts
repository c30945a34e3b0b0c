import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import type { TrajectoryRecord } from '../training/records';
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

/** What training produces: step metrics, trajectories, checkpoints. */
@Injectable()
export class ResultsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * One step, atomically: its metrics row (upsert: a retried write is harmless), its
   * trajectories, the job's progress and a `step` event for live streams.
   */
  saveStep(jobId: string, step: number, totalSteps: number, metrics: Record<string, number>, trajectories: TrajectoryRecord[]) {
    const json = metrics as Prisma.InputJsonObject;
    return this.prisma.$transaction([
      this.prisma.stepMetric.upsert({ where: { jobId_step: { jobId, step } }, create: { jobId, step, metrics: json }, update: { metrics: json } }),
      this.prisma.trajectory.createMany({
        data: trajectories.map((t) => ({
          jobId,
          step,
          group: t.group,
          sample: t.sample,
          envSeed: BigInt(t.envSeed),
          return: t.return,
          success: t.success,
          turns: t.turns,
          actions: t.actions,
          formatErrors: t.formatErrors,
          tokens: t.tokens,
          meanEntropy: t.meanEntropy,
          text: t.text ?? null,
        })),
        skipDuplicates: true,
      }),
      this.prisma.job.update({ where: { id: jobId }, data: { currentStep: step, progress: step / totalSteps, latestMetrics: json } }),
      this.prisma.jobEvent.create({ data: { jobId, type: 'step', message: `step ${step}`, data: { step, metrics: json } } }),
    ]);
  }

  /** Stores a checkpoint and keeps only the newest `keep` of the job's checkpoints. */
  async saveCheckpoint(jobId: string, step: number, bytes: Uint8Array, keep: number) {
    const data = new Uint8Array(bytes);
    const checkpoint = await this.prisma.$transaction(async (tx) => {
      const saved = await tx.checkpoint.upsert({
        where: { jobId_step: { jobId, step } },
        create: { jobId, step, bytes: data, sizeBytes: data.length },
        update: { bytes: data, sizeBytes: data.length },
        select: { id: true, step: true, sizeBytes: true },
      });
      const stale = await tx.checkpoint.findMany({ where: { jobId }, orderBy: { step: 'desc' }, skip: keep, select: { id: true } });
      if (stale.length > 0) await tx.checkpoint.deleteMany({ where: { id: { in: stale.map((c) => c.id) } } });
      await tx.jobEvent.create({ data: { jobId, type: 'checkpoint', message: `checkpoint at step ${step}`, data: { step, checkpointId: saved.id, sizeBytes: data.length } } });
      return saved;
    });
    return checkpoint;
  }

  latestCheckpoint(jobId: string) {
    return this.prisma.checkpoint.findFirst({ where: { jobId }, orderBy: { step: 'desc' } });
  }

  /** Forgets results after `step` (a resumed run recomputes them from the checkpoint). */
  discardAfter(jobId: string, step: number) {
    return this.prisma.$transaction([
      this.prisma.stepMetric.deleteMany({ where: { jobId, step: { gt: step } } }),
      this.prisma.trajectory.deleteMany({ where: { jobId, step: { gt: step } } }),
    ]);
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

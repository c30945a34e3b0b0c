import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

export interface NewEvaluation {
  jobId: string;
  checkpointId: string;
  step: number;
  environment: { id: string; config: Record<string, unknown> };
  episodes: number;
  k: number;
  temperature: number;
}

export type EvaluationRow = Prisma.EvaluationGetPayload<object>;

/**
 * Evaluations of checkpoints. Postgres is their queue: a worker claims the oldest waiting one
 * with FOR UPDATE SKIP LOCKED, so two workers never take the same one, and an evaluation whose
 * worker stopped heart-beating goes to the next worker that asks.
 */
@Injectable()
export class EvaluationRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(evaluation: NewEvaluation) {
    return this.prisma.evaluation.create({ data: { ...evaluation, environment: evaluation.environment as Prisma.InputJsonObject, status: 'queued' } });
  }

  findForJob(jobId: string, id: string) {
    return this.prisma.evaluation.findFirst({ where: { id, jobId } });
  }

  listForJob(jobId: string, limit: number) {
    return this.prisma.evaluation.findMany({ where: { jobId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  }

  /** Takes the oldest waiting evaluation, or one held by a worker not heard from for `staleMs`. */
  async claim(workerId: string, staleMs: number): Promise<EvaluationRow | null> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      UPDATE evaluations SET status = 'running', worker_id = ${workerId}, started_at = now()
      WHERE id = (
        SELECT e.id FROM evaluations e
        WHERE e.status = 'queued'
           OR (e.status = 'running' AND NOT EXISTS (
                SELECT 1 FROM workers w WHERE w.id = e.worker_id AND w.last_heartbeat_at > now() - make_interval(secs => ${staleMs / 1000})))
        ORDER BY e.created_at
        FOR UPDATE SKIP LOCKED
        LIMIT 1)
      RETURNING id`;
    return rows.length === 0 ? null : this.prisma.evaluation.findUnique({ where: { id: rows[0].id } });
  }

  /**
   * A worker starting under `workerId`: the evaluations an earlier process of that name was
   * playing go back to the queue (it never looked stale: the name kept heart-beating).
   */
  async reclaim(workerId: string): Promise<number> {
    const { count } = await this.prisma.evaluation.updateMany({ where: { workerId, status: 'running' }, data: { status: 'queued', workerId: null, startedAt: null } });
    return count;
  }

  /**
   * Fails evaluations still `running` more than `olderThanMs` after they were claimed: their
   * worker's own timeout should have ended them, so it is stuck; none stays running for ever.
   */
  async expire(olderThanMs: number, error: string): Promise<number> {
    const { count } = await this.prisma.evaluation.updateMany({ where: { status: 'running', startedAt: { lt: new Date(Date.now() - olderThanMs) } }, data: { status: 'failed', error, finishedAt: new Date() } });
    return count;
  }

  /** The bytes to evaluate, if the checkpoint still exists. */
  checkpointBytes(checkpointId: string) {
    return this.prisma.checkpoint.findUnique({ where: { id: checkpointId }, select: { bytes: true } });
  }

  /** Stores the outcome, unless another worker has taken the evaluation over meanwhile. */
  async finish(id: string, workerId: string, outcome: { status: 'succeeded' | 'failed'; success?: number; passAtK?: number; result?: Prisma.InputJsonObject; error?: string }): Promise<boolean> {
    const { count } = await this.prisma.evaluation.updateMany({ where: { id, workerId, status: 'running' }, data: { ...outcome, finishedAt: new Date() } });
    return count > 0;
  }
}

import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/**
 * The end of a usage record `r` as far as slot time goes: when it was closed, or while it is
 * open, when its worker was last heard from (never after now, never before it began).
 */
export const HELD_UNTIL = Prisma.sql`COALESCE(r.ended_at, GREATEST(r.started_at, LEAST(now(), COALESCE((SELECT w.last_heartbeat_at FROM workers w WHERE w.id = r.worker_id), now()))))`;

export interface UsageRow {
  userId: string;
  userName: string;
  device: 'gpu' | 'cpu';
  slotSeconds: number;
  jobs: number;
  attempts: number;
}

/** Who held worker slots when: one record per attempt of a job (JobLifecycleRepository opens and closes them). */
@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Slot-seconds per user and device inside [from, to]. A record still open counts up to when
   * its worker was last heard from (HELD_UNTIL): a running attempt up to its last heartbeat, one
   * whose worker was lost not past it, before the scheduler closes it.
   */
  async summary(from: Date, to: Date, userId: string | null): Promise<UsageRow[]> {
    const rows = await this.prisma.$queryRaw<{ user_id: string; name: string; device: 'gpu' | 'cpu'; seconds: number; jobs: bigint; attempts: bigint }[]>`
      SELECT r.user_id, u.name, r.device,
             SUM(EXTRACT(EPOCH FROM (LEAST(r.held_until, ${to}) - GREATEST(r.started_at, ${from}))))::float8 AS seconds,
             COUNT(DISTINCT r.job_id) AS jobs, COUNT(*) AS attempts
      FROM (SELECT r.*, ${HELD_UNTIL} AS held_until FROM usage_records r) r JOIN users u ON u.id = r.user_id
      WHERE r.started_at < ${to} AND r.held_until > ${from}
        AND (${userId}::uuid IS NULL OR r.user_id = ${userId}::uuid)
      GROUP BY r.user_id, u.name, r.device
      ORDER BY u.name, r.device`;
    return rows.map((r) => ({ userId: r.user_id, userName: r.name, device: r.device, slotSeconds: r.seconds, jobs: Number(r.jobs), attempts: Number(r.attempts) }));
  }
}

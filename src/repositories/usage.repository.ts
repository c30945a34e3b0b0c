import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

export interface UsageRow {
  userId: string;
  userName: string;
  device: 'gpu' | 'cpu';
  slotSeconds: number;
  jobs: number;
  attempts: number;
}

/** Who held worker slots when: one record per attempt of a job. */
@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Opens a record for a new attempt; an attempt left open by a crashed worker is closed now. */
  open(record: { jobId: string; userId: string; workerId: string; device: 'gpu' | 'cpu' }) {
    const now = new Date();
    return this.prisma.$transaction([
      this.prisma.usageRecord.updateMany({ where: { jobId: record.jobId, endedAt: null }, data: { endedAt: now } }),
      this.prisma.usageRecord.create({ data: { ...record, startedAt: now } }),
    ]);
  }

  close(jobId: string) {
    return this.prisma.usageRecord.updateMany({ where: { jobId, endedAt: null }, data: { endedAt: new Date() } });
  }

  /** Slot-seconds per user and device inside [from, to] (running attempts count up to now). */
  async summary(from: Date, to: Date, userId: string | null): Promise<UsageRow[]> {
    const rows = await this.prisma.$queryRaw<{ user_id: string; name: string; device: 'gpu' | 'cpu'; seconds: number; jobs: bigint; attempts: bigint }[]>`
      SELECT r.user_id, u.name, r.device,
             SUM(EXTRACT(EPOCH FROM (LEAST(COALESCE(r.ended_at, now()), ${to}) - GREATEST(r.started_at, ${from}))))::float8 AS seconds,
             COUNT(DISTINCT r.job_id) AS jobs, COUNT(*) AS attempts
      FROM usage_records r JOIN users u ON u.id = r.user_id
      WHERE r.started_at < ${to} AND COALESCE(r.ended_at, now()) > ${from}
        AND (${userId}::uuid IS NULL OR r.user_id = ${userId}::uuid)
      GROUP BY r.user_id, u.name, r.device
      ORDER BY u.name, r.device`;
    return rows.map((r) => ({ userId: r.user_id, userName: r.name, device: r.device, slotSeconds: r.seconds, jobs: Number(r.jobs), attempts: Number(r.attempts) }));
  }
}

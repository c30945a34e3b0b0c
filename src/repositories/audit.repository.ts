import { Injectable } from '@nestjs/common';
import type { AuditAction, AuditTargetType } from '../contracts/audit.dto';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

export interface AuditEntry {
  /** null: the service itself (the STARLAB_ADMIN_KEY bootstrap). */
  actorId: string | null;
  actorName: string;
  action: AuditAction;
  targetType: AuditTargetType;
  targetId: string;
  /** The sentence also logged as an `audit:` line. */
  message: string;
  /** The changed fields. */
  data: Prisma.InputJsonObject;
}

/** The entry a change records, from what it wrote (ids are known only then). */
export type AuditOf<T> = (written: T) => AuditEntry;

export interface AuditFilter {
  action?: AuditAction;
  actorId?: string;
  targetId?: string;
  since?: Date;
  /** Only events with a smaller id (the page cursor). */
  beforeId?: bigint;
  limit: number;
}

export type AuditEventRow = Prisma.AuditEventGetPayload<object>;

/** Admin actions on users, teams and API keys: written with the change they record, read newest first. */
@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Writes through `tx`, the transaction of the change, so that both commit or neither does. */
  record(tx: Prisma.TransactionClient, entry: AuditEntry): Promise<AuditEventRow> {
    return tx.auditEvent.create({ data: entry });
  }

  list(filter: AuditFilter): Promise<AuditEventRow[]> {
    return this.prisma.auditEvent.findMany({
      where: {
        action: filter.action,
        actorId: filter.actorId,
        targetId: filter.targetId,
        createdAt: filter.since ? { gte: filter.since } : undefined,
        id: filter.beforeId === undefined ? undefined : { lt: filter.beforeId },
      },
      orderBy: { id: 'desc' },
      take: filter.limit,
    });
  }
}

import { Injectable, Logger } from '@nestjs/common';
import type { AuditEventListView, AuditEventView, ListAuditQuery } from '../contracts/audit.dto';
import { AuditEntry, AuditEventRow, AuditOf, AuditRepository } from '../repositories/audit.repository';
import { requireAdmin } from './access';
import type { Principal } from './auth.service';
import { ValidationFailed } from './errors';

/** An audit entry without its actor (the caller fills that in). */
export type AuditDescription = Omit<AuditEntry, 'actorId' | 'actorName'>;

/**
 * Runs a change of users, teams or API keys as `principal`: `write` hands the `audit` callback to
 * the repository, which records the entry in the change's own transaction; once that has
 * committed, the same sentence is logged as an `audit:` line. A write that changes nothing (an
 * idempotent repeat, a lost race) never calls `audit`, so nothing is recorded or logged.
 */
export async function audited<T, R>(logger: Logger, principal: Principal, write: (audit: AuditOf<T>) => Promise<R>, describe: (written: T) => AuditDescription): Promise<R> {
  let entry: AuditEntry | undefined;
  const result = await write((written) => (entry = { actorId: principal.userId, actorName: principal.name, ...describe(written) }));
  if (entry) logger.log(`audit: ${entry.message}`);
  return result;
}

/** The audit log of admin actions on users, teams and API keys (GET /v1/audit, admins only). */
@Injectable()
export class AuditService {
  constructor(private readonly audits: AuditRepository) {}

  /** Newest first; `after` is the next_cursor of the previous page. */
  async list(principal: Principal, query: ListAuditQuery): Promise<AuditEventListView> {
    requireAdmin(principal, 'read the audit log');
    if (query.after !== undefined && !/^\d{1,19}$/.test(query.after)) throw new ValidationFailed([{ field: 'query.after', message: 'is not a cursor returned by this API' }]);
    const limit = query.limit ?? 20;
    const rows = await this.audits.list({
      action: query.action,
      actorId: query.actorId,
      targetId: query.targetId,
      since: query.since === undefined ? undefined : new Date(query.since),
      beforeId: query.after === undefined ? undefined : BigInt(query.after),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map(toAuditEventView),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? page[page.length - 1].id.toString() : null,
    };
  }
}

function toAuditEventView(row: AuditEventRow): AuditEventView {
  return {
    id: row.id.toString(),
    createdAt: row.createdAt.toISOString(),
    actorId: row.actorId,
    actorName: row.actorName,
    action: row.action as AuditEventView['action'],
    targetType: row.targetType as AuditEventView['targetType'],
    targetId: row.targetId,
    message: row.message,
    data: row.data as Record<string, unknown>,
  };
}

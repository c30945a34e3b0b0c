import { Injectable } from '@nestjs/common';
import type { Prisma, Role } from '../generated/prisma/client';
import { AuditOf, AuditRepository } from './audit.repository';
import { PrismaService } from './prisma.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const WITH_TEAM = { team: true } as const;
const WITH_MEMBER_COUNT = { _count: { select: { users: true } } } as const;

export interface KeyData {
  name: string;
  prefix: string;
  hash: string;
}

export interface UserChanges {
  role?: Role;
  /** A team name (created if new), or null for no team. */
  team?: string | null;
  maxRunningJobs?: number | null;
  maxQueuedJobs?: number | null;
}

export type UserRow = Prisma.UserGetPayload<{ include: typeof WITH_TEAM }>;
export type TeamRow = Prisma.TeamGetPayload<{ include: typeof WITH_MEMBER_COUNT }>;
export type ApiKeyRow = Prisma.ApiKeyGetPayload<object>;

/**
 * Users, teams and API keys. Every change takes the audit entry it records (`audit`, built from
 * what was written) and stores it in the same transaction.
 */
@Injectable()
export class UserRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audits: AuditRepository,
  ) {}

  /** The live key with this hash and its user (null when unknown or revoked). */
  findActiveKey(hash: string) {
    return this.prisma.apiKey.findFirst({ where: { hash, revokedAt: null }, include: { user: { include: WITH_TEAM } } });
  }

  touchKey(id: string, at: Date) {
    return this.prisma.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }

  findUser(idOrName: string): Promise<UserRow | null> {
    return this.prisma.user.findFirst({ where: UUID.test(idOrName) ? { OR: [{ id: idOrName }, { name: idOrName }] } : { name: idOrName }, include: WITH_TEAM });
  }

  listUsers(): Promise<UserRow[]> {
    return this.prisma.user.findMany({ orderBy: { name: 'asc' }, include: WITH_TEAM });
  }

  /** Creates the user (and the team if new) with a first API key, atomically; null when the name is taken. */
  createUserWithKey(
    user: { name: string; role: Role; team?: string; maxRunningJobs?: number; maxQueuedJobs?: number },
    key: KeyData,
    audit: AuditOf<{ user: UserRow; apiKey: ApiKeyRow }>,
  ) {
    return nullOnUniqueViolation(
      this.audited(audit, async (tx) => {
        const team = user.team ? await tx.team.upsert({ where: { name: user.team }, create: { name: user.team }, update: {} }) : null;
        const created = await tx.user.create({
          data: { name: user.name, role: user.role, teamId: team?.id, maxRunningJobs: user.maxRunningJobs, maxQueuedJobs: user.maxQueuedJobs },
          include: WITH_TEAM,
        });
        const apiKey = await tx.apiKey.create({ data: { userId: created.id, ...key } });
        return { user: created, apiKey };
      }),
    );
  }

  /** Applies the changes (creating a named team if new); undefined fields are left as they are. */
  updateUser(id: string, changes: UserChanges, audit: AuditOf<UserRow>): Promise<UserRow> {
    return this.audited(audit, async (tx) => {
      let teamId: string | null | undefined;
      if (changes.team === null) teamId = null;
      else if (changes.team !== undefined) teamId = (await tx.team.upsert({ where: { name: changes.team }, create: { name: changes.team }, update: {} })).id;
      return tx.user.update({
        where: { id },
        data: { role: changes.role, teamId, maxRunningJobs: changes.maxRunningJobs, maxQueuedJobs: changes.maxQueuedJobs },
        include: WITH_TEAM,
      });
    });
  }

  /** Sets or clears disabledAt; a disabled user's keys are refused by findActiveKey's caller. */
  setUserDisabled(id: string, disabledAt: Date | null, audit: AuditOf<UserRow>): Promise<UserRow> {
    return this.audited(audit, (tx) => tx.user.update({ where: { id }, data: { disabledAt }, include: WITH_TEAM }));
  }

  /** Enabled admins other than `exceptUserId`. */
  countOtherActiveAdmins(exceptUserId: string): Promise<number> {
    return this.prisma.user.count({ where: { role: 'admin', disabledAt: null, id: { not: exceptUserId } } });
  }

  /** Makes sure an admin key with this hash exists (the configured bootstrap key). */
  async ensureAdminKey(userName: string, key: KeyData, audit: AuditOf<ApiKeyRow>): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      if (await tx.apiKey.findUnique({ where: { hash: key.hash } })) return false;
      const admin = await tx.user.upsert({ where: { name: userName }, create: { name: userName, role: 'admin' }, update: {} });
      const created = await tx.apiKey.create({ data: { userId: admin.id, ...key } });
      await this.audits.record(tx, audit(created));
      return true;
    });
  }

  createKey(userId: string, key: KeyData, audit: AuditOf<ApiKeyRow>): Promise<ApiKeyRow> {
    return this.audited(audit, (tx) => tx.apiKey.create({ data: { userId, ...key } }));
  }

  /** All keys of the user, revoked ones included, oldest first. */
  listKeys(userId: string): Promise<ApiKeyRow[]> {
    return this.prisma.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  findKey(id: string): Promise<ApiKeyRow | null> {
    return this.prisma.apiKey.findUnique({ where: { id } });
  }

  /**
   * Revokes the key unless it already is (the first revocation time is kept); true when this
   * call revoked it, and only then is the change audited.
   */
  revokeKey(id: string, at: Date, audit: AuditOf<ApiKeyRow>): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
      if (count === 0) return false;
      await this.audits.record(tx, audit(await tx.apiKey.findUniqueOrThrow({ where: { id } })));
      return true;
    });
  }

  /** null when the name is taken. */
  createTeam(team: { name: string; shareJobs: boolean }, audit: AuditOf<TeamRow>): Promise<TeamRow | null> {
    return nullOnUniqueViolation(this.audited(audit, (tx) => tx.team.create({ data: team, include: WITH_MEMBER_COUNT })));
  }

  findTeam(idOrName: string): Promise<TeamRow | null> {
    return this.prisma.team.findFirst({ where: UUID.test(idOrName) ? { OR: [{ id: idOrName }, { name: idOrName }] } : { name: idOrName }, include: WITH_MEMBER_COUNT });
  }

  listTeams(): Promise<TeamRow[]> {
    return this.prisma.team.findMany({ orderBy: { name: 'asc' }, include: WITH_MEMBER_COUNT });
  }

  /** null when the new name is taken. */
  updateTeam(id: string, changes: { name?: string; shareJobs?: boolean }, audit: AuditOf<TeamRow>): Promise<TeamRow | null> {
    return nullOnUniqueViolation(this.audited(audit, (tx) => tx.team.update({ where: { id }, data: changes, include: WITH_MEMBER_COUNT })));
  }

  /** `write`, and the audit entry of what it wrote, in one transaction. */
  private audited<T>(audit: AuditOf<T>, write: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(async (tx) => {
      const written = await write(tx);
      await this.audits.record(tx, audit(written));
      return written;
    });
  }
}

/** A unique-name race lost to a concurrent request reads as "already exists", not as a 500. */
async function nullOnUniqueViolation<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (error) {
    if ((error as { code?: string })?.code === 'P2002') return null;
    throw error;
  }
}

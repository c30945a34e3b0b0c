import { Injectable } from '@nestjs/common';
import type { Role } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** Users, teams and API keys. */
@Injectable()
export class UserRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The live key with this hash and its user (null when unknown or revoked). */
  findActiveKey(hash: string) {
    return this.prisma.apiKey.findFirst({ where: { hash, revokedAt: null }, include: { user: { include: { team: true } } } });
  }

  touchKey(id: string, at: Date) {
    return this.prisma.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }

  findUser(idOrName: string) {
    const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
    return this.prisma.user.findFirst({ where: isUuid ? { OR: [{ id: idOrName }, { name: idOrName }] } : { name: idOrName }, include: { team: true } });
  }

  /** Creates the user (and the team if new) with a first API key, atomically. */
  createUserWithKey(user: { name: string; role: Role; team?: string }, key: { name: string; prefix: string; hash: string }) {
    return this.prisma.$transaction(async (tx) => {
      const team = user.team ? await tx.team.upsert({ where: { name: user.team }, create: { name: user.team }, update: {} }) : null;
      const created = await tx.user.create({ data: { name: user.name, role: user.role, teamId: team?.id }, include: { team: true } });
      const apiKey = await tx.apiKey.create({ data: { userId: created.id, ...key } });
      return { user: created, apiKey };
    });
  }

  /** Makes sure an admin key with this hash exists (the configured bootstrap key). */
  async ensureAdminKey(userName: string, key: { name: string; prefix: string; hash: string }): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      if (await tx.apiKey.findUnique({ where: { hash: key.hash } })) return false;
      const admin = await tx.user.upsert({ where: { name: userName }, create: { name: userName, role: 'admin' }, update: {} });
      await tx.apiKey.create({ data: { userId: admin.id, ...key } });
      return true;
    });
  }
}

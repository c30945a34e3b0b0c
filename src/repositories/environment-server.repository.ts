import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { AuditOf, AuditRepository } from './audit.repository';
import { PrismaService } from './prisma.service';
import type { EnvDefinition } from '../training/envs/types';
import { isBuiltInEnvironment } from '../training/envs/registry';
import type { EnvServerAddress } from '../training/envs/remote/address';
import type { Manifest } from '../training/envs/remote/protocol';
import { ServedEnvironment, storedServedDefinition } from '../training/envs/remote/remote-env';
import type { OpenEnvMapping } from '../training/envs/remote/sessions';

export type EnvironmentServerRow = Prisma.EnvironmentServerGetPayload<object>;
export type NewEnvironmentServer = Omit<Prisma.EnvironmentServerUncheckedCreateInput, 'createdAt'>;

/** Registered environment servers (POST /v1/environments), each change with its audit entry. */
@Injectable()
export class EnvironmentServerRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly audits: AuditRepository,
  ) {}

  /** null when the id is taken already. */
  async create(server: NewEnvironmentServer, audit: AuditOf<EnvironmentServerRow>): Promise<EnvironmentServerRow | null> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const created = await tx.environmentServer.create({ data: server });
        await this.audits.record(tx, audit(created));
        return created;
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') return null;
      throw error;
    }
  }

  find(id: string): Promise<EnvironmentServerRow | null> {
    return this.prisma.environmentServer.findUnique({ where: { id } });
  }

  /** The registered environment a spec names (its `environment.id`), undefined for a built-in or an unknown id. */
  async definitionFor(spec: unknown): Promise<(EnvDefinition & { served: ServedEnvironment }) | undefined> {
    const row = await this.registrationFor(spec);
    return row ? storedDefinition(row) : undefined;
  }

  /** The registration a spec's `environment.id` names; null for a built-in or an unknown id. */
  async registrationFor(spec: unknown): Promise<EnvironmentServerRow | null> {
    const id = environmentIdOf(spec);
    if (id === undefined || id.length > 64 || isBuiltInEnvironment(id)) return null;
    return this.find(id);
  }

  /** The same for a stored spec, which named a registration when it was accepted: 'gone' when an admin has deleted it since. */
  async registrationOrGone(spec: unknown): Promise<EnvironmentServerRow | null | 'gone'> {
    const id = environmentIdOf(spec);
    if (id === undefined || isBuiltInEnvironment(id)) return null;
    return (await this.find(id)) ?? 'gone';
  }

  list(): Promise<EnvironmentServerRow[]> {
    return this.prisma.environmentServer.findMany({ orderBy: { id: 'asc' } });
  }

  /** null when there was none (already deleted). */
  delete(id: string, audit: AuditOf<EnvironmentServerRow>): Promise<EnvironmentServerRow | null> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.environmentServer.findUnique({ where: { id } });
      if (!row) return null;
      await tx.environmentServer.delete({ where: { id } });
      await this.audits.record(tx, audit(row));
      return row;
    });
  }
}

/** A spec's `environment.id`, when it is a string. */
export function environmentIdOf(spec: unknown): string | undefined {
  const id = (spec as { environment?: { id?: unknown } } | null)?.environment?.id;
  return typeof id === 'string' ? id : undefined;
}

/** Where a registered environment is served, from its row. */
export function serverAddress(row: EnvironmentServerRow): EnvServerAddress {
  return row.protocol === 'openenv' ? { protocol: 'openenv', url: row.url, mapping: row.openenv as unknown as OpenEnvMapping } : { protocol: 'starlab', url: row.url };
}

/** The registration as a definition for checking job specs (no connection is opened). */
export function storedDefinition(row: EnvironmentServerRow): EnvDefinition & { served: ServedEnvironment } {
  const served: ServedEnvironment = { url: row.url, protocol: row.protocol as ServedEnvironment['protocol'], digest: row.digest, fork: row.fork, observationTokens: row.observationTokens };
  return storedServedDefinition(row.id, row.manifest as unknown as Manifest, served);
}

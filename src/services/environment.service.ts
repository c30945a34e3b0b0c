import { Injectable, Logger } from '@nestjs/common';
import { Type } from '@sinclair/typebox';
import type { EnvironmentView } from '../contracts/catalog.dto';
import type { RegisterEnvironmentBody } from '../contracts/environments.dto';
import type { AuditOf } from '../repositories/audit.repository';
import { EnvironmentServerRepository, EnvironmentServerRow } from '../repositories/environment-server.repository';
import { connectServedEnvironment } from '../repositories/env-servers';
import { ADDRESSED_ENVIRONMENTS, readServerAddress } from '../training/envs/remote/address';
import type { Manifest } from '../training/envs/remote/protocol';
import { listEnvironments } from '../training/envs/registry';
import { RECIPE_DESCRIPTION, SERVED_RECIPES } from '../training/spec/recipes';
import { requireAdmin } from './access';
import { audited } from './audit.service';
import type { Principal } from './auth.service';
import { CatalogService } from './catalog.service';
import { Conflict, NotFound, ValidationFailed } from './errors';
import { toJsonSchema } from './json-schema';

/** Registration answers within these bounds, whatever the server does. */
const REGISTRATION_HTTP = { timeoutMs: 5_000, retries: 1, backoffMs: 200 };

/** Ids a registration may not take: the built-ins' and the addressed forms of `npm run train`. */
function reservedIds(): Set<string> {
  return new Set([...listEnvironments().map((definition) => definition.id), ...Object.keys(ADDRESSED_ENVIRONMENTS)]);
}

/**
 * The environments jobs may name: the built-ins and the servers admins registered. Registration
 * reads and checks the server's manifest and plays a first episode before anything is stored;
 * registering and deleting are audited.
 */
@Injectable()
export class EnvironmentService {
  private readonly logger = new Logger(EnvironmentService.name);

  constructor(
    private readonly servers: EnvironmentServerRepository,
    private readonly catalog: CatalogService,
  ) {}

  async list(): Promise<EnvironmentView[]> {
    return [...this.catalog.listEnvironments(), ...(await this.servers.list()).map(toEnvironmentView)];
  }

  async get(id: string): Promise<EnvironmentView> {
    const builtIn = this.catalog.listEnvironments().find((view) => view.id === id);
    if (builtIn) return builtIn;
    const row = await this.servers.find(id);
    if (!row) throw new NotFound('environment', id);
    return toEnvironmentView(row);
  }

  async register(principal: Principal, body: RegisterEnvironmentBody): Promise<EnvironmentView> {
    requireAdmin(principal, 'register environments');
    const protocol = body.protocol ?? 'starlab';
    if (reservedIds().has(body.id)) throw new ValidationFailed([{ field: 'body.id', message: `"${body.id}" is a built-in environment's name; choose another` }]);
    if (protocol === 'openenv' && !body.openenv) throw new ValidationFailed([{ field: 'body.openenv', message: 'an OpenEnv server needs its mapping: observationField, actionField, actions' }]);
    if (protocol === 'starlab' && body.openenv) throw new ValidationFailed([{ field: 'body.openenv', message: 'only for "protocol": "openenv"' }]);
    if (await this.servers.find(body.id)) throw taken(body.id);
    const { address, errors } = readServerAddress(protocol, { url: body.url, ...(body.openenv ?? {}) }, 'body');
    if (!address) throw new ValidationFailed(errors.map((e) => ({ field: e.field === 'body.url' ? e.field : e.field.replace(/^body\./, 'body.openenv.'), message: e.message })));
    const probed = await this.probe(body.id, address);
    const created = await audited(
      this.logger,
      principal,
      (audit: AuditOf<EnvironmentServerRow>) =>
        this.servers.create(
          {
            id: body.id,
            protocol,
            url: address.url,
            openenv: address.protocol === 'openenv' ? { ...address.mapping } : undefined,
            manifest: { ...probed.manifest },
            digest: probed.digest,
            fork: probed.fork,
            observationTokens: probed.observationTokens,
            registeredById: principal.userId,
            registeredByName: principal.name,
          },
          audit,
        ),
      (row) => ({
        action: 'environment.register',
        targetType: 'environment',
        targetId: row.id,
        message: `admin ${principal.name} (${principal.userId}) registered environment ${row.id} (${row.protocol} at ${row.url}, manifest ${row.digest.slice(0, 12)})`,
        data: { protocol: row.protocol, url: row.url, digest: row.digest },
      }),
    );
    if (!created) throw taken(body.id);
    return toEnvironmentView(created);
  }

  /** Jobs trained on it keep their results; those running on it fail when they next connect. */
  async remove(principal: Principal, id: string): Promise<void> {
    requireAdmin(principal, 'delete environments');
    const deleted = await audited(
      this.logger,
      principal,
      (audit: AuditOf<EnvironmentServerRow>) => this.servers.delete(id, audit),
      (row) => ({
        action: 'environment.delete',
        targetType: 'environment',
        targetId: row.id,
        message: `admin ${principal.name} (${principal.userId}) deleted environment ${row.id} (${row.protocol} at ${row.url})`,
        data: { protocol: row.protocol, url: row.url },
      }),
    );
    if (!deleted) throw new NotFound('environment', id);
  }

  /** The manifest and a first episode; a server that does not answer, or answers badly, names `url`. */
  private async probe(id: string, address: Parameters<typeof connectServedEnvironment>[1]): Promise<{ manifest: Manifest; digest: string; fork: boolean; observationTokens: number }> {
    try {
      const connected = await connectServedEnvironment(id, address, REGISTRATION_HTTP);
      connected.dispose();
      const { digest, fork, observationTokens } = connected.definition.served;
      return { manifest: connected.manifest, digest, fork, observationTokens };
    } catch (error) {
      throw new ValidationFailed([{ field: 'body.url', message: `the server did not answer as an environment server: ${(error as Error).message}` }]);
    }
  }
}

function taken(id: string): Conflict {
  const conflict = new Conflict(`environment ${id} is registered already (body.id)`);
  conflict.extensions.errors = [{ field: 'body.id', message: 'is registered already; delete it first or choose another' }];
  return conflict;
}

const NO_CONFIG = toJsonSchema(Type.Object({}, { additionalProperties: false }));

function toEnvironmentView(row: EnvironmentServerRow): EnvironmentView {
  const manifest = row.manifest as unknown as Manifest;
  const recipes = Object.entries(SERVED_RECIPES).filter(([kind]) => kind !== 'demonstrations' || manifest.expert);
  return {
    id: row.id,
    description: manifest.description || `environment served at ${row.url}`,
    actions: [...manifest.actions],
    symbols: {},
    hasExpert: manifest.expert,
    configSchema: NO_CONFIG,
    defaults: {},
    rolloutDefaults: manifest.maxTurns === undefined ? {} : { maxTurns: manifest.maxTurns },
    recipes: Object.fromEntries(recipes.map(([kind, recipe]) => [kind, { description: RECIPE_DESCRIPTION, spec: { ...recipe } }])),
    server: {
      protocol: row.protocol as 'starlab' | 'openenv',
      url: row.url,
      digest: row.digest,
      fork: row.fork,
      registeredBy: row.registeredByName,
      registeredAt: row.createdAt.toISOString(),
    },
  };
}

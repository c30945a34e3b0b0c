import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { UserRepository } from '../repositories/user.repository';
import { TooManyRequests, Unauthenticated } from './errors';
import { PrincipalCache } from './principal-cache';
import { RateLimitService } from './rate-limit.service';

/** Who is calling: resolved from the API key on every request. */
export interface Principal {
  userId: string;
  name: string;
  role: 'admin' | 'member';
  teamId: string | null;
  /** The caller's team lets team-mates read each other's jobs. */
  teamSharesJobs: boolean;
  keyId: string;
}

const KEY_PREFIX = 'sl_';
/** lastUsedAt is a hint for humans; writing it on every request would cost a write per read. */
const TOUCH_INTERVAL_MS = 60_000;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The hash of the key in an Authorization header; Unauthenticated when there is none. */
function keyHash(authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new Unauthenticated('send an API key as "Authorization: Bearer <key>"');
  return hashApiKey(match[1]);
}

/** sl_ + 32 url-safe characters (192 bits); the first 11 characters are the shown prefix. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  return { key, prefix: key.slice(0, 11), hash: hashApiKey(key) };
}

/**
 * Authentication: an API key to a Principal on every request, from Postgres or from the
 * replica's PrincipalCache, so revocation, disabling and role changes apply within its bound
 * (STARLAB_PRINCIPAL_CACHE_MS, 5 s by default) and at once when made through this replica.
 * Keys that do not resolve cost a query each, so a client address with too many failed lookups
 * in a minute (STARLAB_AUTH_FAILURES_PER_MINUTE) is refused with a 429 before any query.
 */
@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly users: UserRepository,
    private readonly cache: PrincipalCache,
    private readonly limits: RateLimitService,
  ) {}

  /** The caller of a request from `clientAddress` with this Authorization header. */
  async authenticate(authorization: string | undefined, clientAddress: string): Promise<Principal> {
    const hash = keyHash(authorization);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const retryAfter = await this.limits.lookupsRefused(clientAddress);
    if (retryAfter !== null) throw new TooManyRequests(`too many failed API key lookups from ${clientAddress} in a minute; retry in ${retryAfter} s`, retryAfter);
    // A revocation through this replica while the lookup runs voids its result (PrincipalCache.generation).
    const generation = this.cache.generation;
    const principal = await this.lookUp(hash, true);
    if (!principal) {
      await this.limits.lookupFailed(clientAddress);
      throw new Unauthenticated('the API key is not valid or has been revoked');
    }
    this.cache.set(hash, principal, generation);
    return principal;
  }

  /**
   * The caller as Postgres has it now, bypassing the cache, or null when the key is no longer
   * valid (revoked, its user disabled): what an open event stream checks while it runs.
   */
  async current(authorization: string | undefined): Promise<Principal | null> {
    return this.lookUp(keyHash(authorization), false).catch((error: unknown) => {
      if (error instanceof Unauthenticated) return null;
      throw error;
    });
  }

  private async lookUp(hash: string, touch: boolean): Promise<Principal | null> {
    const found = await this.users.findActiveKey(hash);
    if (!found || found.user.disabledAt) return null;
    const now = new Date();
    if (touch && (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > TOUCH_INTERVAL_MS)) {
      // Awaited (once a minute per key at most) so that a listing made right after a use shows it.
      await this.users.touchKey(found.id, now).catch((error: Error) => this.logger.warn(`key ${found.id} (${found.prefix}…): ${error.message}`));
    }
    const { user } = found;
    return { userId: user.id, name: user.name, role: user.role, teamId: user.teamId, teamSharesJobs: user.team?.shareJobs ?? false, keyId: found.id };
  }

  /**
   * STARLAB_ADMIN_KEY: lets a newcomer curl at once. Idempotent across restarts and replicas; a
   * key it creates is an audit event of the service itself (no actor id).
   */
  async bootstrapAdminKey(key: string): Promise<void> {
    const created = await this.users.ensureAdminKey('admin', { name: 'bootstrap (STARLAB_ADMIN_KEY)', prefix: key.slice(0, 11), hash: hashApiKey(key) }, (apiKey) => ({
      actorId: null,
      actorName: 'STARLAB_ADMIN_KEY',
      action: 'api_key.issue',
      targetType: 'api_key',
      targetId: apiKey.id,
      message: `STARLAB_ADMIN_KEY issued API key ${apiKey.id} (${apiKey.prefix}…) for user ${apiKey.userId}`,
      data: { userId: apiKey.userId, name: apiKey.name, prefix: apiKey.prefix },
    }));
    if (created) this.logger.log(`created admin API key ${key.slice(0, 11)}… from STARLAB_ADMIN_KEY`);
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { UserRepository } from '../repositories/user.repository';
import { Unauthenticated } from './errors';
import { PrincipalCache } from './principal-cache';

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

/** sl_ + 32 url-safe characters (192 bits); the first 11 characters are the shown prefix. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  return { key, prefix: key.slice(0, 11), hash: hashApiKey(key) };
}

/**
 * Authentication: an API key to a Principal on every request, from Postgres or from the
 * replica's PrincipalCache, so revocation, disabling and role changes apply within its bound
 * (STARLAB_PRINCIPAL_CACHE_MS, 5 s by default) and at once when made through this replica.
 */
@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly users: UserRepository,
    private readonly cache: PrincipalCache,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new Unauthenticated('send an API key as "Authorization: Bearer <key>"');
    const hash = hashApiKey(match[1]);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const principal = await this.lookUp(hash);
    this.cache.set(hash, principal);
    return principal;
  }

  private async lookUp(hash: string): Promise<Principal> {
    const found = await this.users.findActiveKey(hash);
    if (!found || found.user.disabledAt) throw new Unauthenticated('the API key is not valid or has been revoked');
    const now = new Date();
    if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
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

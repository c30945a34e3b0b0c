import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyListView, ApiKeyView, CreateApiKeyBody, IssuedApiKeyView, ListApiKeysQuery } from '../contracts/api-keys.dto';
import type { AuditOf } from '../repositories/audit.repository';
import { ApiKeyRow, UserRepository } from '../repositories/user.repository';
import { canSeeUser } from './access';
import { audited } from './audit.service';
import { Principal, generateApiKey } from './auth.service';
import { NotFound } from './errors';
import { PrincipalCache } from './principal-cache';
import { isUuid } from './job.service';

/** Self-service API keys: issue, list (prefix only), revoke. Admins act on anyone's. Issuing and revoking are audit events. */
@Injectable()
export class ApiKeyService {
  private readonly logger = new Logger(ApiKeyService.name);

  constructor(
    private readonly users: UserRepository,
    private readonly principals: PrincipalCache,
  ) {}

  /** A new key for the caller (or, for admins, for `body.user`); the secret is returned once. */
  async create(principal: Principal, body: CreateApiKeyBody): Promise<IssuedApiKeyView> {
    const ownerId = body.user ? await this.visibleUserId(principal, body.user) : principal.userId;
    const issued = generateApiKey();
    const key = await audited(
      this.logger,
      principal,
      (audit: AuditOf<ApiKeyRow>) => this.users.createKey(ownerId, { name: body.name, prefix: issued.prefix, hash: issued.hash }, audit),
      (created) => ({
        action: 'api_key.issue',
        targetType: 'api_key',
        targetId: created.id,
        message: `${principal.name} (${principal.userId}) issued API key ${created.id} (${created.prefix}…) for user ${ownerId}`,
        data: { userId: ownerId, name: created.name, prefix: created.prefix },
      }),
    );
    return toIssuedKeyView(key, issued.key);
  }

  async list(principal: Principal, query: ListApiKeysQuery): Promise<ApiKeyListView> {
    const ownerId = query.user ? await this.visibleUserId(principal, query.user) : principal.userId;
    return { data: (await this.users.listKeys(ownerId)).map((key) => toApiKeyView(key, principal.keyId)) };
  }

  /** Idempotent; the key is refused from the next request on by this replica, by the others within STARLAB_PRINCIPAL_CACHE_MS. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const key = isUuid(id) ? await this.users.findKey(id) : null;
    if (!key || !canSeeUser(principal, key.userId)) throw new NotFound('API key', id);
    if (key.revokedAt) return;
    await audited(
      this.logger,
      principal,
      // This replica forgets the key at once; other replicas within STARLAB_PRINCIPAL_CACHE_MS.
      (audit: AuditOf<ApiKeyRow>) => this.users.revokeKey(id, new Date(), audit).finally(() => this.principals.clear()),
      (revoked) => ({
        action: 'api_key.revoke',
        targetType: 'api_key',
        targetId: revoked.id,
        message: `${principal.name} (${principal.userId}) revoked API key ${revoked.id} (${revoked.prefix}…) of user ${revoked.userId}`,
        data: { userId: revoked.userId, name: revoked.name, prefix: revoked.prefix, revokedAt: revoked.revokedAt?.toISOString() ?? null },
      }),
    );
  }

  private async visibleUserId(principal: Principal, idOrName: string): Promise<string> {
    const user = await this.users.findUser(idOrName);
    if (!user || !canSeeUser(principal, user.id)) throw new NotFound('user', idOrName);
    return user.id;
  }
}

export function toIssuedKeyView(key: ApiKeyRow, secret: string): IssuedApiKeyView {
  return { id: key.id, name: key.name, prefix: key.prefix, key: secret, createdAt: key.createdAt.toISOString() };
}

function toApiKeyView(key: ApiKeyRow, currentKeyId: string): ApiKeyView {
  return {
    id: key.id,
    userId: key.userId,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    current: key.id === currentKeyId,
  };
}

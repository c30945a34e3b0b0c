import { Injectable, Logger } from '@nestjs/common';
import type { CreatedUserView, CreateUserBody, PrincipalView, UpdateUserBody, UserListView, UserView } from '../contracts/users.dto';
import type { AuditOf } from '../repositories/audit.repository';
import { ApiKeyRow, UserRepository, UserRow } from '../repositories/user.repository';
import { canSeeUser, requireAdmin } from './access';
import { toIssuedKeyView } from './api-key.service';
import { AuditDescription, audited } from './audit.service';
import { Principal, generateApiKey } from './auth.service';
import { Conflict, NotFound } from './errors';
import { PrincipalCache } from './principal-cache';

/**
 * User management: admins create, list, change (role, team, quotas) and disable users; a
 * member sees only themself. Admin actions are recorded as audit events (GET /v1/audit) in the
 * transaction of the change and logged as `audit:` lines with both ids (job actions are audited
 * as job events instead).
 */
@Injectable()
export class UserService {
  private readonly logger = new Logger(UserService.name);

  constructor(
    private readonly users: UserRepository,
    private readonly principals: PrincipalCache,
  ) {}

  /** The user and a first API key, whose secret is shown once. */
  async create(principal: Principal, body: CreateUserBody): Promise<CreatedUserView> {
    requireAdmin(principal, 'create users');
    const issued = generateApiKey();
    const created = (await this.users.findUser(body.name))
      ? null
      : await this.auditedByAdmin(
          principal,
          (audit: AuditOf<{ user: UserRow; apiKey: ApiKeyRow }>) =>
            this.users.createUserWithKey(
              { name: body.name, role: body.role ?? 'member', team: body.team, maxRunningJobs: body.maxRunningJobs, maxQueuedJobs: body.maxQueuedJobs },
              { name: 'first key', prefix: issued.prefix, hash: issued.hash },
              audit,
            ),
          ({ user, apiKey }) => ({
            action: 'user.create',
            targetId: user.id,
            what: `created user ${user.id} (${user.name}, ${user.role}, team ${user.team?.name ?? 'none'}) with API key ${apiKey.id} (${apiKey.prefix}…)`,
            data: { name: user.name, role: user.role, team: user.team?.name ?? null, maxRunningJobs: user.maxRunningJobs, maxQueuedJobs: user.maxQueuedJobs, apiKeyId: apiKey.id, apiKeyPrefix: apiKey.prefix },
          }),
        );
    if (!created) throw new Conflict(`user ${body.name} already exists`);
    const { user, apiKey } = created;
    return { user: toUserView(user), apiKey: toIssuedKeyView(apiKey, issued.key) };
  }

  async list(principal: Principal): Promise<UserListView> {
    requireAdmin(principal, 'list users');
    return { data: (await this.users.listUsers()).map(toUserView) };
  }

  /** Who the caller's API key belongs to. */
  me(principal: Principal): PrincipalView {
    return { id: principal.userId, name: principal.name, role: principal.role, teamId: principal.teamId };
  }

  /** Admins see anyone; a member only themself (anyone else is a 404). */
  async get(principal: Principal, idOrName: string): Promise<UserView> {
    const user = await this.users.findUser(idOrName);
    if (!user || !canSeeUser(principal, user.id)) throw new NotFound('user', idOrName);
    return toUserView(user);
  }

  async update(principal: Principal, idOrName: string, changes: UpdateUserBody): Promise<UserView> {
    requireAdmin(principal, 'change users');
    const user = await this.existing(idOrName);
    if (changes.role === 'member' && user.role === 'admin' && !user.disabledAt) await this.keepAnAdmin(user, 'demote');
    const changed = Object.entries(changes).map(([field, value]) => `${field}=${value ?? (field === 'team' ? 'none' : 'default')}`);
    const updated = await this.auditedByAdmin(
      principal,
      (audit: AuditOf<UserRow>) => this.users.updateUser(user.id, changes, audit),
      () => ({ action: 'user.update', targetId: user.id, what: `updated user ${user.id} (${user.name}): ${changed.join(', ') || 'nothing'}`, data: { ...changes } }),
    );
    return toUserView(updated);
  }

  /** Idempotent; the user's keys are refused from the next request on (their jobs are left as they are). */
  async disable(principal: Principal, idOrName: string): Promise<UserView> {
    requireAdmin(principal, 'disable users');
    const user = await this.existing(idOrName);
    if (user.disabledAt) return toUserView(user);
    if (user.role === 'admin') await this.keepAnAdmin(user, 'disable');
    const disabled = await this.auditedByAdmin(
      principal,
      (audit: AuditOf<UserRow>) => this.users.setUserDisabled(user.id, new Date(), audit),
      (row) => ({ action: 'user.disable', targetId: user.id, what: `disabled user ${user.id} (${user.name})`, data: { disabledAt: row.disabledAt?.toISOString() ?? null } }),
    );
    return toUserView(disabled);
  }

  /** Idempotent; the user's unrevoked keys work again. */
  async enable(principal: Principal, idOrName: string): Promise<UserView> {
    requireAdmin(principal, 'enable users');
    const user = await this.existing(idOrName);
    if (!user.disabledAt) return toUserView(user);
    const enabled = await this.auditedByAdmin(
      principal,
      (audit: AuditOf<UserRow>) => this.users.setUserDisabled(user.id, null, audit),
      () => ({ action: 'user.enable', targetId: user.id, what: `enabled user ${user.id} (${user.name})`, data: { disabledAt: null } }),
    );
    return toUserView(enabled);
  }

  private async existing(idOrName: string): Promise<UserRow> {
    const user = await this.users.findUser(idOrName);
    if (!user) throw new NotFound('user', idOrName);
    return user;
  }

  /** Nobody could manage users any more (STARLAB_ADMIN_KEY only re-adds a key to the user named admin). */
  private async keepAnAdmin(user: UserRow, action: 'demote' | 'disable'): Promise<void> {
    if ((await this.users.countOtherActiveAdmins(user.id)) === 0) throw new Conflict(`cannot ${action} ${user.name}: it is the last enabled admin`);
  }

  /**
   * The change with its audit event, whose message (and log line) says which admin did `what`.
   * Any such change may alter what a key resolves to, so this replica's PrincipalCache is
   * emptied (other replicas follow within its bound).
   */
  private auditedByAdmin<T, R>(principal: Principal, write: (audit: AuditOf<T>) => Promise<R>, describe: (written: T) => Omit<AuditDescription, 'targetType' | 'message'> & { what: string }): Promise<R> {
    const changed = (audit: AuditOf<T>) => write(audit).finally(() => this.principals.clear());
    return audited(this.logger, principal, changed, (written) => {
      const { what, ...entry } = describe(written);
      return { ...entry, targetType: 'user', message: `admin ${principal.name} (${principal.userId}) ${what}` };
    });
  }
}

export function toUserView(user: UserRow): UserView {
  return {
    id: user.id,
    name: user.name,
    role: user.role,
    team: user.team?.name ?? null,
    teamId: user.teamId,
    maxRunningJobs: user.maxRunningJobs,
    maxQueuedJobs: user.maxQueuedJobs,
    disabledAt: user.disabledAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
  };
}

import { Injectable, Logger } from '@nestjs/common';
import type { CreateTeamBody, TeamListView, TeamView, UpdateTeamBody } from '../contracts/teams.dto';
import type { AuditOf } from '../repositories/audit.repository';
import { TeamRow, UserRepository } from '../repositories/user.repository';
import { requireAdmin } from './access';
import { AuditDescription, audited } from './audit.service';
import type { Principal } from './auth.service';
import { Conflict, NotFound } from './errors';
import { PrincipalCache } from './principal-cache';

/** Teams: admins create and change them (name, whether team-mates read each other's jobs); each change is an audit event. */
@Injectable()
export class TeamService {
  private readonly logger = new Logger(TeamService.name);

  constructor(
    private readonly users: UserRepository,
    private readonly principals: PrincipalCache,
  ) {}

  async create(principal: Principal, body: CreateTeamBody): Promise<TeamView> {
    requireAdmin(principal, 'create teams');
    const team = await this.auditedByAdmin(
      principal,
      (audit: AuditOf<TeamRow>) => this.users.createTeam({ name: body.name, shareJobs: body.shareJobs ?? false }, audit),
      (created) => ({ action: 'team.create', targetId: created.id, what: `created team ${created.id} (${created.name}, shareJobs=${created.shareJobs})`, data: { name: created.name, shareJobs: created.shareJobs } }),
    );
    if (!team) throw new Conflict(`team ${body.name} already exists`);
    return toTeamView(team);
  }

  /** Admins: every team; members: their own (if any). */
  async list(principal: Principal): Promise<TeamListView> {
    if (principal.role === 'admin') return { data: (await this.users.listTeams()).map(toTeamView) };
    const own = principal.teamId ? await this.users.findTeam(principal.teamId) : null;
    return { data: own ? [toTeamView(own)] : [] };
  }

  /** A change of shareJobs applies to the team-mates' next request. */
  async update(principal: Principal, idOrName: string, changes: UpdateTeamBody): Promise<TeamView> {
    requireAdmin(principal, 'change teams');
    const team = await this.users.findTeam(idOrName);
    if (!team) throw new NotFound('team', idOrName);
    const changed = Object.entries(changes).map(([field, value]) => `${field}=${value}`);
    const updated = await this.auditedByAdmin(
      principal,
      (audit: AuditOf<TeamRow>) => this.users.updateTeam(team.id, changes, audit),
      () => ({ action: 'team.update', targetId: team.id, what: `updated team ${team.id} (${team.name}): ${changed.join(', ') || 'nothing'}`, data: { ...changes } }),
    );
    if (!updated) throw new Conflict(`team ${changes.name} already exists`);
    return toTeamView(updated);
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
      return { ...entry, targetType: 'team', message: `admin ${principal.name} (${principal.userId}) ${what}` };
    });
  }
}

function toTeamView(team: TeamRow): TeamView {
  return { id: team.id, name: team.name, shareJobs: team.shareJobs, members: team._count.users, createdAt: team.createdAt.toISOString() };
}

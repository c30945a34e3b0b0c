import { Injectable, Logger } from '@nestjs/common';
import type { CreateTeamBody, TeamView, UpdateTeamBody } from '../api/teams.dto';
import { TeamRow, UserRepository } from '../repositories/user.repository';
import { requireAdmin } from './access';
import type { Principal } from './auth.service';
import { Conflict, NotFound } from './errors';

/** Teams: admins create and change them (name, whether team-mates read each other's jobs). */
@Injectable()
export class TeamService {
  private readonly logger = new Logger(TeamService.name);

  constructor(private readonly users: UserRepository) {}

  async create(principal: Principal, body: CreateTeamBody): Promise<TeamView> {
    requireAdmin(principal, 'create teams');
    const team = await this.users.createTeam({ name: body.name, shareJobs: body.shareJobs ?? false });
    if (!team) throw new Conflict(`team ${body.name} already exists`);
    this.audit(principal, `created team ${team.id} (${team.name}, shareJobs=${team.shareJobs})`);
    return toTeamView(team);
  }

  /** Admins: every team; members: their own (if any). */
  async list(principal: Principal): Promise<{ data: TeamView[] }> {
    if (principal.role === 'admin') return { data: (await this.users.listTeams()).map(toTeamView) };
    const own = principal.teamId ? await this.users.findTeam(principal.teamId) : null;
    return { data: own ? [toTeamView(own)] : [] };
  }

  /** A change of shareJobs applies to the team-mates' next request. */
  async update(principal: Principal, idOrName: string, changes: UpdateTeamBody): Promise<TeamView> {
    requireAdmin(principal, 'change teams');
    const team = await this.users.findTeam(idOrName);
    if (!team) throw new NotFound('team', idOrName);
    const updated = await this.users.updateTeam(team.id, changes);
    if (!updated) throw new Conflict(`team ${changes.name} already exists`);
    const changed = Object.entries(changes).map(([field, value]) => `${field}=${value}`);
    this.audit(principal, `updated team ${team.id} (${team.name}): ${changed.join(', ') || 'nothing'}`);
    return toTeamView(updated);
  }

  private audit(principal: Principal, what: string): void {
    this.logger.log(`audit: admin ${principal.name} (${principal.userId}) ${what}`);
  }
}

function toTeamView(team: TeamRow): TeamView {
  return { id: team.id, name: team.name, shareJobs: team.shareJobs, members: team._count.users, createdAt: team.createdAt.toISOString() };
}

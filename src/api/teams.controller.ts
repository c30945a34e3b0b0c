import { Body, Controller, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Principal } from '../services/auth.service';
import { TeamService } from '../services/team.service';
import { Caller } from './auth.guard';
import { AdminOnlyResponse, NameTakenResponse, NotVisibleResponse, TeamIdParam } from './identity.decorators';
import { BadRequestResponse, JsonBody, Operation } from './openapi.decorators';
import { CreateTeamSchema, UpdateTeamSchema } from '../contracts/teams.dto';
import { parseInput } from './validation';

@ApiTags('teams')
@Controller('v1/teams')
export class TeamsController {
  constructor(private readonly teams: TeamService) {}

  @Post()
  @Operation({ id: 'createTeam', summary: 'Create a team (admins)', status: 201, response: 'Team' })
  @JsonBody('CreateTeam')
  @BadRequestResponse()
  @AdminOnlyResponse()
  @NameTakenResponse('team')
  createTeam(@Caller() caller: Principal, @Body() body: unknown) {
    return this.teams.create(caller, parseInput(CreateTeamSchema, body, 'body'));
  }

  @Get()
  @Operation({ id: 'listTeams', summary: 'Teams with member counts (admins: all; members: their own)', response: 'TeamList' })
  listTeams(@Caller() caller: Principal) {
    return this.teams.list(caller);
  }

  @Patch(':id')
  @Operation({ id: 'updateTeam', summary: 'Rename a team or set whether team-mates read each other’s jobs (admins)', response: 'Team' })
  @TeamIdParam()
  @JsonBody('UpdateTeam')
  @BadRequestResponse()
  @AdminOnlyResponse()
  @NotVisibleResponse('team')
  @NameTakenResponse('team')
  updateTeam(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.teams.update(caller, id, parseInput(UpdateTeamSchema, body, 'body'));
  }
}

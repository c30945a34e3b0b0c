import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { RegisterEnvironmentSchema } from '../contracts/environments.dto';
import type { Principal } from '../services/auth.service';
import { EnvironmentService } from '../services/environment.service';
import { Caller } from './auth.guard';
import { AdminOnlyResponse, NameTakenResponse, NotVisibleResponse } from './identity.decorators';
import { BadRequestResponse, JsonBody, Operation } from './openapi.decorators';
import { parseInput } from './validation';

const EnvironmentIdParam = () => ApiParam({ name: 'id', description: 'environment id (a built-in’s or a registered one’s)', schema: { type: 'string', maxLength: 64 } });

/** Built-in environments and the servers admins register (docs/environments.md). */
@ApiTags('catalog')
@Controller('v1/environments')
export class EnvironmentsController {
  constructor(private readonly environments: EnvironmentService) {}

  @Get()
  @Operation({ id: 'listEnvironments', summary: 'Environments, built-in and registered, with their config schemas and defaults', response: 'EnvironmentList' })
  async listEnvironments() {
    return { data: await this.environments.list() };
  }

  @Get(':id')
  @Operation({ id: 'getEnvironment', summary: 'One environment, built-in or registered', response: 'Environment' })
  @EnvironmentIdParam()
  @NotVisibleResponse('environment')
  getEnvironment(@Param('id') id: string) {
    return this.environments.get(id);
  }

  @Post()
  @Operation({ id: 'registerEnvironment', summary: 'Register an environment server after reading its manifest and playing a first episode (admins)', status: 201, response: 'Environment' })
  @JsonBody('RegisterEnvironment')
  @BadRequestResponse()
  @AdminOnlyResponse()
  @NameTakenResponse('environment')
  registerEnvironment(@Caller() caller: Principal, @Body() body: unknown) {
    return this.environments.register(caller, parseInput(RegisterEnvironmentSchema, body, 'body'));
  }

  @Delete(':id')
  @HttpCode(204)
  @Operation({ id: 'deleteEnvironment', summary: 'Remove a registered environment; jobs and results trained on it stay (admins)', status: 204 })
  @EnvironmentIdParam()
  @AdminOnlyResponse()
  @NotVisibleResponse('environment')
  async deleteEnvironment(@Caller() caller: Principal, @Param('id') id: string) {
    await this.environments.remove(caller, id);
  }
}

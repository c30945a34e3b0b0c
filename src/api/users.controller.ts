import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AuthService, Principal } from '../services/auth.service';
import { Caller } from './auth.guard';
import { BadRequestResponse, JsonBody, Operation } from './openapi.decorators';
import { CreateUserSchema } from './users.dto';
import { parseInput } from './validation';

@ApiTags('users')
@Controller('v1/users')
export class UsersController {
  constructor(private readonly auth: AuthService) {}

  @Post()
  @Operation({ id: 'createUser', summary: 'Create a user and its first API key (admins)', status: 201, response: 'CreatedUser' })
  @JsonBody('CreateUser')
  @BadRequestResponse()
  createUser(@Caller() caller: Principal, @Body() body: unknown) {
    return this.auth.createUser(caller, parseInput(CreateUserSchema, body, 'body'));
  }

  @Get('me')
  @Operation({ id: 'getCurrentUser', summary: 'Who the API key belongs to', response: 'Principal' })
  getCurrentUser(@Caller() caller: Principal) {
    return { id: caller.userId, name: caller.name, role: caller.role, teamId: caller.teamId };
  }
}

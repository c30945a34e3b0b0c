import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Principal } from '../services/auth.service';
import { UserService } from '../services/user.service';
import { Caller } from './auth.guard';
import { AdminOnlyResponse, LastAdminResponse, NameTakenResponse, NotVisibleResponse, UserIdParam } from './identity.decorators';
import { BadRequestResponse, JsonBody, Operation } from './openapi.decorators';
import { CreateUserSchema } from '../contracts/users.dto';
import { parseInput, parseUpdateUser } from './validation';

@ApiTags('users')
@Controller('v1/users')
export class UsersController {
  constructor(private readonly users: UserService) {}

  @Post()
  @Operation({ id: 'createUser', summary: 'Create a user and its first API key (admins)', status: 201, response: 'CreatedUser' })
  @JsonBody('CreateUser')
  @BadRequestResponse()
  @AdminOnlyResponse()
  @NameTakenResponse('user')
  createUser(@Caller() caller: Principal, @Body() body: unknown) {
    return this.users.create(caller, parseInput(CreateUserSchema, body, 'body'));
  }

  @Get()
  @Operation({ id: 'listUsers', summary: 'All users, disabled ones included (admins)', response: 'UserList' })
  @AdminOnlyResponse()
  listUsers(@Caller() caller: Principal) {
    return this.users.list(caller);
  }

  // Before ':id', so that "me" is not taken for a user name.
  @Get('me')
  @Operation({ id: 'getCurrentUser', summary: 'Who the API key belongs to', response: 'Principal' })
  getCurrentUser(@Caller() caller: Principal) {
    return this.users.me(caller);
  }

  @Get(':id')
  @Operation({ id: 'getUser', summary: 'A user: role, team, quotas, disabled (admins; members only themselves)', response: 'User' })
  @UserIdParam()
  @NotVisibleResponse('user')
  getUser(@Caller() caller: Principal, @Param('id') id: string) {
    return this.users.get(caller, id);
  }

  @Patch(':id')
  @Operation({ id: 'updateUser', summary: 'Change a user’s role, team or quotas; null resets a quota to the service default (admins)', response: 'User' })
  @UserIdParam()
  @JsonBody('UpdateUser')
  @BadRequestResponse()
  @AdminOnlyResponse()
  @NotVisibleResponse('user')
  @LastAdminResponse()
  updateUser(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.users.update(caller, id, parseUpdateUser(body));
  }

  @Post(':id/disable')
  @HttpCode(200)
  @Operation({ id: 'disableUser', summary: 'Disable a user: their API keys are refused at once (admins)', response: 'User' })
  @UserIdParam()
  @AdminOnlyResponse()
  @NotVisibleResponse('user')
  @LastAdminResponse()
  disableUser(@Caller() caller: Principal, @Param('id') id: string) {
    return this.users.disable(caller, id);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @Operation({ id: 'enableUser', summary: 'Enable a disabled user: their unrevoked API keys work again (admins)', response: 'User' })
  @UserIdParam()
  @AdminOnlyResponse()
  @NotVisibleResponse('user')
  enableUser(@Caller() caller: Principal, @Param('id') id: string) {
    return this.users.enable(caller, id);
  }
}

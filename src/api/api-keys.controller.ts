import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeyService } from '../services/api-key.service';
import type { Principal } from '../services/auth.service';
import { CreateApiKeySchema, ListApiKeysQuerySchema } from '../contracts/api-keys.dto';
import { Caller } from './auth.guard';
import { ApiKeyIdParam, NotVisibleResponse } from './identity.decorators';
import { BadRequestResponse, JsonBody, Operation, QueryParams } from './openapi.decorators';
import { parseInput } from './validation';

@ApiTags('api-keys')
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeyService) {}

  @Post()
  @Operation({ id: 'createApiKey', summary: 'Issue an API key for yourself (admins: for `user`); the secret is shown once', status: 201, response: 'IssuedApiKey' })
  @JsonBody('CreateApiKey')
  @BadRequestResponse()
  @NotVisibleResponse('user')
  createApiKey(@Caller() caller: Principal, @Body() body: unknown) {
    return this.apiKeys.create(caller, parseInput(CreateApiKeySchema, body, 'body'));
  }

  @Get()
  @Operation({ id: 'listApiKeys', summary: 'Your API keys (admins: `user`’s), prefix only, with last use and revocation', response: 'ApiKeyList' })
  @QueryParams(ListApiKeysQuerySchema)
  @BadRequestResponse()
  @NotVisibleResponse('user')
  listApiKeys(@Caller() caller: Principal, @Query() query: unknown) {
    return this.apiKeys.list(caller, parseInput(ListApiKeysQuerySchema, query, 'query'));
  }

  @Delete(':id')
  @HttpCode(204)
  @Operation({ id: 'revokeApiKey', summary: 'Revoke an API key (your own; admins: any); refused at once by this API replica, by the others within STARLAB_PRINCIPAL_CACHE_MS (5 s)', status: 204 })
  @ApiKeyIdParam()
  @NotVisibleResponse('API key')
  revokeApiKey(@Caller() caller: Principal, @Param('id') id: string) {
    return this.apiKeys.revoke(caller, id);
  }
}

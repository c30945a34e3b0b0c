import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AuditService } from '../services/audit.service';
import type { Principal } from '../services/auth.service';
import { ListAuditQuerySchema } from '../contracts/audit.dto';
import { Caller } from './auth.guard';
import { AdminOnlyResponse } from './identity.decorators';
import { BadRequestResponse, Operation, QueryParams } from './openapi.decorators';
import { parseInput } from './validation';

@ApiTags('audit')
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Operation({ id: 'listAuditEvents', summary: 'Admin actions on users, teams and API keys, newest first (admins)', response: 'AuditEventList' })
  @QueryParams(ListAuditQuerySchema)
  @BadRequestResponse()
  @AdminOnlyResponse()
  listAuditEvents(@Caller() caller: Principal, @Query() query: unknown) {
    return this.audit.list(caller, parseInput(ListAuditQuerySchema, query, 'query'));
  }
}

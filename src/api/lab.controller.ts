import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Principal } from '../services/auth.service';
import { LabService } from '../services/lab.service';
import { Caller } from './auth.guard';
import { BadRequestResponse, Operation, QueryParams } from './openapi.decorators';
import { QueueQuerySchema, UsageQuerySchema } from '../contracts/lab.dto';
import { parseInput } from './validation';

@ApiTags('lab')
@Controller('v1')
export class LabController {
  constructor(private readonly lab: LabService) {}

  @Get('queue')
  @Operation({ id: 'getQueue', summary: 'Capacity, workers, and who waits for what and why (others’ jobs by owner only), waiting jobs a page at a time', response: 'QueueView' })
  @QueryParams(QueueQuerySchema)
  @BadRequestResponse()
  getQueue(@Caller() caller: Principal, @Query() query: unknown) {
    return this.lab.queue(caller, parseInput(QueueQuerySchema, query, 'query'));
  }

  @Get('usage')
  @Operation({ id: 'getUsage', summary: 'Slot-seconds by user over a period (members: their own)', response: 'UsageView' })
  @QueryParams(UsageQuerySchema)
  @BadRequestResponse()
  getUsage(@Caller() caller: Principal, @Query() query: unknown) {
    return this.lab.usageSummary(caller, parseInput(UsageQuerySchema, query, 'query'));
  }
}

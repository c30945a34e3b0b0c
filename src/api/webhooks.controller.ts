import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../services/auth.service';
import { WebhookService } from '../services/webhook.service';
import { Caller } from './auth.guard';
import { BadRequestResponse, JsonBody, Operation, problem } from './openapi.decorators';
import { parseInput } from './validation';
import { CreateWebhookSchema } from '../contracts/webhooks.dto';

const WebhookIdParam = () => applyDecorators(ApiParam({ name: 'id', description: 'webhook id', schema: { type: 'string', format: 'uuid' } }), problem(404, 'no such webhook of the caller'));

@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhookService) {}

  @Post()
  @Operation({ id: 'createWebhook', summary: 'Register a webhook (signed per Standard Webhooks); the secret is shown once', status: 201, response: 'CreatedWebhook' })
  @JsonBody('CreateWebhook')
  @BadRequestResponse()
  createWebhook(@Caller() caller: Principal, @Body() body: unknown) {
    return this.webhooks.create(caller, parseInput(CreateWebhookSchema, body, 'body'));
  }

  @Get()
  @Operation({ id: 'listWebhooks', summary: 'Your webhooks', response: 'WebhookList' })
  listWebhooks(@Caller() caller: Principal) {
    return this.webhooks.list(caller);
  }

  @Delete(':id')
  @HttpCode(204)
  @Operation({ id: 'deleteWebhook', summary: 'Remove a webhook', status: 204 })
  @WebhookIdParam()
  deleteWebhook(@Caller() caller: Principal, @Param('id') id: string) {
    return this.webhooks.remove(caller, id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Operation({ id: 'testWebhook', summary: 'Send a signed webhook.test event now and report the answer', response: 'WebhookTestResult' })
  @WebhookIdParam()
  testWebhook(@Caller() caller: Principal, @Param('id') id: string) {
    return this.webhooks.test(caller, id);
  }

  @Get(':id/deliveries')
  @Operation({ id: 'listWebhookDeliveries', summary: 'Recent deliveries with attempts and errors', response: 'WebhookDeliveryList' })
  @WebhookIdParam()
  listWebhookDeliveries(@Caller() caller: Principal, @Param('id') id: string) {
    return this.webhooks.deliveries(caller, id);
  }
}

import { Controller, Get, Header, Headers, Res } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../config/paths';
import { HealthService } from '../services/health.service';
import { TelemetryService } from '../services/telemetry.service';
import { Public } from './auth.guard';
import { Operation } from './openapi.decorators';

/** The committed API contract, served as-is. */
export const OPENAPI_PATH = join(projectRoot(), 'openapi.yaml');

@ApiTags('operations')
@Public()
@Controller()
export class OperationsController {
  constructor(
    private readonly health: HealthService,
    private readonly telemetry: TelemetryService,
  ) {}

  @Get('health')
  @Operation({ id: 'getHealth', summary: 'Liveness: the process answers', isPublic: true, response: 'Health' })
  getHealth() {
    return { status: 'ok' };
  }

  @Get('ready')
  @Operation({ id: 'getReadiness', summary: 'Readiness: database and Redis reachable (503 otherwise)', isPublic: true, response: 'Readiness' })
  @ApiResponse({ status: 503, description: 'not ready: the database or Redis cannot be reached (which one says the body)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Readiness' } } } })
  async getReadiness(@Res({ passthrough: true }) res: Response) {
    const readiness = await this.health.readiness();
    res.status(readiness.status === 'ready' ? 200 : 503);
    return readiness;
  }

  @Get('metrics')
  @Operation({
    id: 'getPrometheusMetrics',
    summary: 'Prometheus metrics of this API process',
    description: 'The lab’s totals for anyone; per-job series (job ids, names, owners) only with `Authorization: Bearer <STARLAB_METRICS_TOKEN>`.',
    isPublic: true,
    contentType: 'text/plain',
    response: 'PrometheusText',
    cacheable: false,
  })
  async getPrometheusMetrics(@Headers('authorization') authorization: string | undefined, @Res() res: Response) {
    // end(), not send(): every scrape counts itself, so an ETag could never match.
    res.type(this.telemetry.registry.contentType).end(await this.telemetry.exposition(authorization));
  }

  @Get('openapi.yaml')
  @Header('Content-Type', 'application/yaml')
  @Operation({ id: 'getOpenApiDocument', summary: 'This API’s OpenAPI document', isPublic: true, contentType: 'application/yaml', response: 'OpenApiDocument' })
  getOpenApiDocument() {
    return readFileSync(OPENAPI_PATH, 'utf8');
  }
}

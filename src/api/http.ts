import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { serve, setup } from 'swagger-ui-express';
import { parse } from 'yaml';
import type { AppConfig } from '../config/config';
import { TelemetryService } from '../services/telemetry.service';
import { answerClientError } from './client-errors';
import { mountDashboard } from './dashboard';
import { countRequests } from './http-metrics';
import { OPENAPI_PATH } from './operations.controller';

/**
 * HTTP plumbing outside Nest's router: request counting for Prometheus, the JSON body parser
 * with the configured limit (its errors reach the ProblemFilter), a 415 for bodies that are not
 * JSON, Swagger UI at /docs over the committed openapi.yaml, the web dashboard at /dashboard, and
 * problem documents for what Node's HTTP parser refuses itself (client-errors.ts).
 */
export function configureHttp(app: NestExpressApplication, config: AppConfig): void {
  app.getHttpServer().on('clientError', answerClientError);
  app.use(countRequests(app.get(TelemetryService)));
  app.use(requireJsonBodies);
  app.useBodyParser('json', { limit: config.bodyLimitBytes, type: ['application/json', 'application/*+json'] });
  app.use('/docs', serve, setup(parse(readFileSync(OPENAPI_PATH, 'utf8')), { customSiteTitle: 'StarLab API' }));
  mountDashboard(app);
}

function requireJsonBodies(req: Request, res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    res
      .status(415)
      .type('application/problem+json')
      .send(JSON.stringify({ type: 'https://starlab.dev/problems/unsupported-media-type', title: 'Unsupported media type', status: 415, detail: 'send the body as application/json', instance: req.originalUrl }));
    return;
  }
  next();
}

import type { NextFunction, Request, Response } from 'express';
import type { TelemetryService } from '../services/telemetry.service';

/** Paths served outside Nest's router, labelled by their mount point. */
const STATIC_MOUNTS = ['/dashboard', '/docs'];

/**
 * Counts every response in starlab_http_requests_total and its latency in
 * starlab_http_request_duration_seconds, labelled by the route template (`/v1/jobs/:id`), so the
 * series count stays bounded whatever ids clients send; paths no route matched are `unmatched`.
 */
export function countRequests(telemetry: TelemetryService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      telemetry.observeRequest(req.method, routeLabel(req), res.statusCode, seconds);
    });
    next();
  };
}

function routeLabel(req: Request): string {
  const template = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof template === 'string') return `${req.baseUrl}${template}`;
  const path = req.originalUrl.split('?')[0];
  return STATIC_MOUNTS.find((mount) => path === mount || path.startsWith(`${mount}/`)) ?? 'unmatched';
}

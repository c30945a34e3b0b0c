import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MetricsCollector } from './metrics-collector';

/**
 * Prometheus metrics of this process (GET /metrics): HTTP traffic counted as it is served, the
 * process's own runtime metrics, and the lab's state read from the database at scrape time.
 */
@Injectable()
export class TelemetryService {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'starlab_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'starlab_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor(collector: MetricsCollector) {
    collectDefaultMetrics({ register: this.registry, prefix: 'starlab_' });
    collector.register(this.registry);
  }

  /** Counts one served request; `route` is the route template (bounded), never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { APP_CONFIG, AppConfig } from '../config/config';
import { MetricsCollector } from './metrics-collector';

/**
 * Prometheus metrics of this process (GET /metrics): HTTP traffic counted as it is served, the
 * process's own runtime metrics, and the lab's state read from the database at scrape time.
 * What names a user's work (per-job series, labelled with job ids, names and owners) is served
 * only to a scraper that presents STARLAB_METRICS_TOKEN as a bearer token; everyone else gets
 * the lab's totals.
 */
@Injectable()
export class TelemetryService {
  readonly registry = new Registry();
  /** Per-job series: ids, names, owners. */
  private readonly jobs = new Registry();
  private readonly token: Buffer | null;
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

  constructor(collector: MetricsCollector, @Inject(APP_CONFIG) config: Pick<AppConfig, 'metricsToken'>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'starlab_' });
    collector.register(this.registry, this.jobs);
    this.token = config.metricsToken === null ? null : digest(config.metricsToken);
  }

  /** The exposition for a scraper that sent this Authorization header. */
  async exposition(authorization: string | undefined): Promise<string> {
    const lab = await this.registry.metrics();
    return this.readsJobs(authorization) ? `${lab}${await this.jobs.metrics()}` : lab;
  }

  private readsJobs(authorization: string | undefined): boolean {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    // Compared as digests, in constant time: the comparison tells nothing of the token.
    return this.token !== null && presented !== undefined && timingSafeEqual(digest(presented), this.token);
  }

  /** Counts one served request; `route` is the route template (bounded), never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

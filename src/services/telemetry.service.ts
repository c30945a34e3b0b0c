import { Injectable } from '@nestjs/common';
import { ResultsRepository } from '../repositories/results.repository';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of this process (GET /metrics). */
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
  readonly jobsSubmitted = new Counter({ name: 'starlab_jobs_submitted_total', help: 'jobs accepted', registers: [this.registry] });

  constructor(results: ResultsRepository) {
    collectDefaultMetrics({ register: this.registry, prefix: 'starlab_' });
    // Warnings are rows in Postgres (written by workers anywhere); the counter is read from them
    // at scrape time, so every API replica reports the same monotonic totals.
    new Counter({
      name: 'starlab_collapse_warnings_total',
      help: 'collapse warnings fired, by detector and severity',
      labelNames: ['detector', 'severity'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await results.warningCounts()) this.inc({ detector: row.detector, severity: row.severity }, row._count._all);
      },
    });
  }
}

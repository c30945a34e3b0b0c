import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { CheckpointListView, EventsQuery, JobEventListView, JobEventView, MetricSeriesView, MetricsQuery, TrajectoriesQuery, TrajectoryListView } from '../contracts/jobs.dto';
import { JobRepository, JobRow } from '../repositories/job.repository';
import { ResultsRepository } from '../repositories/results.repository';
import type { BacktestBody, BacktestResultView, WarningListView, WarningsQuery } from '../contracts/warnings.dto';
import { CollapseMonitor, CollapseRule, backtest, collapseStep } from '../training/signals/collapse';
import { DETECTOR_TABLE } from '../training/signals/detectors';
import type { Metrics } from '../training/signals/step-metrics';
import { canRead } from './access';
import { AuthService, Principal } from './auth.service';
import { NotFound, ValidationFailed } from './errors';
import { JobService, isUuid } from './job.service';
import { hasEnded } from './job-lifecycle';

/** The largest id Postgres's bigint holds: a cursor past it names no row. */
const MAX_BIGINT = 2n ** 63n - 1n;
/** Finished jobs whose series are kept in memory (least recently read goes first), and the longest kept. */
const SERIES_KEPT = 32;
const SERIES_KEPT_MAX_STEPS = 2000;

/** A finished job's series as read for one version of its row, and (once asked for) the whole of it as JSON. */
interface KeptSeries {
  version: string;
  rows: { step: number; metrics: unknown }[];
  json: string | null;
}

/** Reading what a job produced: metrics, events (and their live stream), trajectories, checkpoints. */
@Injectable()
export class ResultsService implements OnModuleDestroy {
  /** Aborted on shutdown: open streams end (clients resume with Last-Event-ID), so the HTTP server can drain. */
  private readonly closing = new AbortController();
  /** Finished jobs' step series by job id (see finishedSeries). */
  private readonly series = new Map<string, KeptSeries>();

  constructor(
    private readonly jobService: JobService,
    private readonly jobs: JobRepository,
    private readonly results: ResultsRepository,
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'principalCacheMs'>,
  ) {}

  async metrics(principal: Principal, jobId: string, query: MetricsQuery): Promise<MetricSeriesView> {
    return this.seriesOf(await this.jobService.readable(principal, jobId), query);
  }

  /**
   * The series as JSON text (what GET /v1/jobs/{id}/metrics sends): a finished job's whole
   * series is serialized once and kept with it (see finishedSeries), the rest on each request.
   */
  async metricsJson(principal: Principal, jobId: string, query: MetricsQuery): Promise<string> {
    const job = await this.jobService.readable(principal, jobId);
    const whole = query.names === undefined && query.from === undefined && query.to === undefined;
    const kept = whole ? await this.finishedSeries(job) : null;
    if (kept) return (kept.json ??= JSON.stringify({ data: kept.rows }));
    return JSON.stringify(await this.seriesOf(job, query));
  }

  private async seriesOf(job: JobRow, query: MetricsQuery): Promise<MetricSeriesView> {
    if (query.from !== undefined && query.to !== undefined && query.from > query.to) {
      throw new ValidationFailed([{ field: 'query.to', message: 'must be >= query.from' }]);
    }
    const names = query.names ? new Set(query.names.split(',').map((n) => n.trim()).filter(Boolean)) : null;
    const rows = (await this.finishedRows(job, query)) ?? (await this.results.metrics(job.id, query.from, query.to));
    return {
      data: rows.map((row) => {
        const all = row.metrics as Record<string, number>;
        return { step: row.step, metrics: names ? Object.fromEntries(Object.entries(all).filter(([n]) => names.has(n))) : all };
      }),
    };
  }

  /**
   * A finished job's series never changes while it stays finished: it is read once and served
   * from memory, for as long as the job row (read fresh on every request, for access too) is the
   * same version. Anything that changes the series (a rollback, a resume) changes the row first,
   * so this copy is never stale. Null: not kept (running, paused or too long); read it.
   */
  private async finishedSeries(job: JobRow): Promise<KeptSeries | null> {
    if (!hasEnded(job.status) || job.currentStep > SERIES_KEPT_MAX_STEPS) return null;
    const version = `${job.status}:${job.updatedAt.getTime()}:${job.attempt}:${job.currentStep}`;
    let kept = this.series.get(job.id);
    if (kept?.version !== version) {
      kept = { version, rows: await this.results.metrics(job.id, undefined, undefined), json: null };
      this.series.delete(job.id);
      if (this.series.size >= SERIES_KEPT) this.series.delete(this.series.keys().next().value!);
    } else {
      this.series.delete(job.id); // re-inserted below: the map's order is least recently used first
    }
    this.series.set(job.id, kept);
    return kept;
  }

  private async finishedRows(job: JobRow, query: MetricsQuery): Promise<KeptSeries['rows'] | null> {
    const kept = await this.finishedSeries(job);
    if (!kept) return null;
    const { from, to } = query;
    return from === undefined && to === undefined ? kept.rows : kept.rows.filter((r) => (from === undefined || r.step >= from) && (to === undefined || r.step <= to));
  }

  async events(principal: Principal, jobId: string, query: EventsQuery): Promise<JobEventListView> {
    await this.jobService.readable(principal, jobId);
    const limit = query.limit ?? 200;
    const rows = await this.jobs.eventsAfter(jobId, BigInt(query.after ?? 0), limit + 1);
    return { data: rows.slice(0, limit).map(toEventView), has_more: rows.length > limit };
  }

  /**
   * Events after `afterId` as they are written, until the job has finished and everything has
   * been delivered, or `signal` aborts. Reads Postgres (the record), so a stream survives API
   * restarts and resumes exactly from Last-Event-ID. The caller's key (`authorization`) is
   * checked again against Postgres every half STARLAB_PRINCIPAL_CACHE_MS (at least every poll):
   * a stream whose key was revoked, whose user was disabled or who may no longer read the job
   * ends within the bound a request with that key is refused in.
   */
  async *follow(principal: Principal, jobId: string, afterId: bigint, signal: AbortSignal, authorization: string | undefined, pollMs = 500): AsyncGenerator<JobEventView> {
    const job = await this.jobService.readable(principal, jobId);
    signal = AbortSignal.any([signal, this.closing.signal]);
    const recheckMs = Math.max(pollMs, this.config.principalCacheMs / 2);
    let checkedAt = Date.now();
    let cursor = afterId;
    while (!signal.aborted) {
      if (Date.now() - checkedAt >= recheckMs) {
        const caller = await this.auth.current(authorization);
        if (!caller || !canRead(caller, job)) return;
        checkedAt = Date.now();
      }
      const rows = await this.jobs.eventsAfter(jobId, cursor, 500);
      for (const row of rows) {
        cursor = row.id;
        yield toEventView(row);
      }
      if (rows.length === 500) continue;
      const current = await this.jobs.findById(jobId);
      if (!current || hasEnded(current.status)) {
        const tail = await this.jobs.eventsAfter(jobId, cursor, 500);
        for (const row of tail) yield toEventView(row);
        return;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, pollMs);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  onModuleDestroy(): void {
    this.closing.abort();
  }

  async warnings(principal: Principal, jobId: string, query: WarningsQuery): Promise<WarningListView> {
    const job = await this.jobService.readable(principal, jobId);
    const rows = await this.results.warnings(jobId, query.minSeverity);
    return { data: rows.map(({ step, detector, signal, value, threshold, severity, message }) => ({ step, detector, signal, value, threshold, severity, message })), detectors: detectorsOf(job.spec) };
  }

  /** What the given rules would have said on this job's stored metrics (no retraining). */
  async backtest(principal: Principal, jobId: string, body: BacktestBody): Promise<BacktestResultView> {
    await this.jobService.readable(principal, jobId);
    const series = (await this.results.metrics(jobId, undefined, undefined)).map((row) => ({ step: row.step, metrics: row.metrics as Metrics }));
    return { data: backtest(series, body.rules), steps: series.length, collapseStep: collapseStep(series) };
  }

  async trajectories(principal: Principal, jobId: string, query: TrajectoriesQuery): Promise<TrajectoryListView> {
    await this.jobService.readable(principal, jobId);
    if (query.after !== undefined && !(/^\d{1,19}$/.test(query.after) && BigInt(query.after) <= MAX_BIGINT)) throw new ValidationFailed([{ field: 'query.after', message: 'is not a cursor returned by this API' }]);
    const limit = query.limit ?? 100;
    const afterId = query.after === undefined ? undefined : BigInt(query.after);
    let step = query.step;
    // Without a step or range: the latest step that has trajectories (for a later page, the step
    // of its cursor, so that pages stay on one step while the job trains on).
    if (step === undefined && query.from === undefined && query.to === undefined) {
      step = (afterId === undefined ? await this.results.latestTrajectoryStep(jobId) : await this.results.trajectoryStep(jobId, afterId)) ?? undefined;
      if (step === undefined) return { data: [], has_more: false, next_cursor: null };
    }
    const rows = await this.results.trajectories(jobId, {
      fromStep: step ?? query.from,
      toStep: step ?? query.to,
      success: query.success,
      minReturn: query.minReturn,
      withText: query.withText,
      afterId,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((t) => ({ ...t, id: t.id.toString(), envSeed: t.envSeed.toString(), jobId: undefined })),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? page[page.length - 1].id.toString() : null,
    };
  }

  async checkpoints(principal: Principal, jobId: string): Promise<CheckpointListView> {
    await this.jobService.readable(principal, jobId);
    const rows = await this.results.checkpoints(jobId);
    return { data: rows.map((c) => ({ ...c, createdAt: c.createdAt.toISOString(), downloadUrl: `/v1/checkpoints/${c.id}/download` })) };
  }

  async checkpointBytes(principal: Principal, checkpointId: string): Promise<{ bytes: Uint8Array; fileName: string }> {
    const checkpoint = isUuid(checkpointId) ? await this.results.checkpointWithBytes(checkpointId) : null;
    if (!checkpoint || !checkpoint.bytes || !canRead(principal, { ownerId: checkpoint.job.ownerId, owner: checkpoint.job.owner })) {
      throw new NotFound('checkpoint', checkpointId);
    }
    return { bytes: checkpoint.bytes, fileName: `${checkpoint.jobId}-step${checkpoint.step}.starlab-ckpt` };
  }
}

function toEventView(row: { id: bigint; type: string; message: string; data: unknown; createdAt: Date }): JobEventView {
  return { id: Number(row.id), type: row.type, message: row.message, data: row.data ?? null, createdAt: row.createdAt.toISOString() };
}

/** The job's detectors as its monitor runs them: the defaults with its collapse.rules applied. */
function detectorsOf(spec: unknown): WarningListView['detectors'] {
  const rules = (spec as { collapse?: { rules?: CollapseRule[] } }).collapse?.rules ?? [];
  const configs = new CollapseMonitor(rules).detectors;
  return Object.fromEntries(DETECTOR_TABLE.map((d) => [d.id, { signal: d.signal, enabled: configs[d.id].enabled, threshold: configs[d.id].threshold, severity: configs[d.id].severity }]));
}

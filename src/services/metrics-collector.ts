import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JOB_STATUSES } from '../contracts/jobs.dto';
import { RunningJobRow, StepTiming, TelemetryRepository } from '../repositories/telemetry.repository';
import { DETECTORS } from '../training/signals/collapse';

/**
 * Canonical training metrics exported per running job (`starlab_job_metric{metric=…}`). A fixed
 * list plus the evaluation success series (any `eval/…success…` name, whatever the evaluation
 * protocol calls it), capped at MAX_TRAINING_GAUGES names so the series count stays bounded.
 */
export const TRAINING_GAUGE_METRICS = [
  'reward/mean',
  'reward/std_in_group',
  'reward/std_in_group_kept',
  'success/rate',
  'success/pass_at_k',
  'entropy/mean',
  'grad_norm/actor',
  'grad_norm/critic',
  'diversity/distinct_ratio',
  'diversity/identical_groups',
  'format/valid_rate',
  'kl/update',
  'kl/ref',
  'loss/policy',
  'perf/tokens_per_s',
  'perf/step_ms',
] as const;
export const MAX_TRAINING_GAUGES = 20;
const EVAL_SUCCESS = /^eval\/.*success/;
const DEVICES = ['gpu', 'cpu', 'any'] as const;
const SEVERITIES = ['info', 'warning', 'critical'] as const;
/** Steps over which a running job's step rate is measured. */
const STEP_RATE_WINDOW = 10;
/** One scrape reads the database once, however many metrics it renders. */
const SNAPSHOT_TTL_MS = 1000;

export interface LabSnapshot {
  takenAt: number;
  submitted: number;
  jobsByStatus: Map<string, number>;
  waiting: { device: string; count: number; oldestCreatedAt: Date | null }[];
  workers: { id: string; device: string; slots: number; running: number; lastHeartbeatAt: Date }[];
  running: RunningJobRow[];
  stepTimes: StepTiming[];
  evaluations: { jobId: string; metrics: Record<string, number> }[];
  warnings: { detector: string; severity: string; count: number }[];
}

/**
 * The names of a job's latest metrics that become gauges: the fixed list, then evaluation
 * success series in name order, at most MAX_TRAINING_GAUGES.
 */
export function trainingGaugeNames(metrics: Record<string, number>): string[] {
  const fixed = TRAINING_GAUGE_METRICS.filter((name) => Number.isFinite(metrics[name]));
  const evals = Object.keys(metrics).filter((name) => EVAL_SUCCESS.test(name) && Number.isFinite(metrics[name])).sort();
  return [...fixed, ...evals].slice(0, MAX_TRAINING_GAUGES);
}

/** Steps per second over the stored window: (n − 1) intervals between the first and last write. */
export function stepRate(timing: StepTiming): number | null {
  const seconds = (timing.lastAt.getTime() - timing.firstAt.getTime()) / 1000;
  return timing.steps >= 2 && seconds > 0 ? (timing.steps - 1) / seconds : null;
}

/**
 * Prometheus gauges and counters of the lab, read from the database at scrape time so every API
 * replica reports the same values: jobs by status and submitted, queue depth and wait, worker
 * slots and heartbeats, and per running job its step rate, progress and latest training metrics.
 * A scrape while the database is unreachable still answers, with `starlab_metrics_collector_up 0`.
 */
@Injectable()
export class MetricsCollector {
  private readonly logger = new Logger(MetricsCollector.name);
  private cached: { at: number; snapshot: Promise<LabSnapshot | null> } | null = null;

  constructor(
    private readonly telemetry: TelemetryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The lab's series into `registry`; the per-job ones (job ids, names, owners: users' data) into `jobs`. */
  register(registry: Registry, jobs: Registry): void {
    const snapshot = () => this.snapshot();
    // Each metric is refilled from the scrape's snapshot; it stays empty when the database could not be read.
    const collectFrom = <M extends Gauge | Counter>(fill: (metric: M, lab: LabSnapshot) => void) =>
      async function (this: M) {
        this.reset();
        const lab = await snapshot();
        if (lab) fill(this, lab);
      };
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, s: LabSnapshot) => void, into = registry) =>
      new Gauge({ name, help, labelNames, registers: [into], collect: collectFrom(fill) });
    const counter = (name: string, help: string, labelNames: string[], fill: (c: Counter, s: LabSnapshot) => void) =>
      new Counter({ name, help, labelNames, registers: [registry], collect: collectFrom(fill) });

    new Gauge({
      name: 'starlab_metrics_collector_up',
      help: '1 when this scrape could read the lab state from the database',
      registers: [registry],
      async collect() {
        this.set((await snapshot()) ? 1 : 0);
      },
    });
    counter('starlab_jobs_submitted_total', 'jobs accepted (idempotent replays excluded)', [], (c, s) => c.inc(s.submitted));
    counter('starlab_collapse_warnings_total', 'collapse warnings fired, by detector and severity', ['detector', 'severity'], (c, s) => {
      // Every detector and severity starts at 0, so increase() sees the first warning too.
      for (const detector of DETECTORS) for (const severity of SEVERITIES) c.inc({ detector, severity }, 0);
      for (const w of s.warnings) c.inc({ detector: w.detector, severity: w.severity }, w.count);
    });
    gauge('starlab_jobs', 'jobs by status', ['status'], (g, s) => {
      for (const status of JOB_STATUSES) g.set({ status }, s.jobsByStatus.get(status) ?? 0);
    });
    gauge('starlab_queue_depth', 'queued jobs by the device they ask for', ['device'], (g, s) => {
      for (const device of DEVICES) g.set({ device }, s.waiting.find((w) => w.device === device)?.count ?? 0);
    });
    gauge('starlab_queue_oldest_wait_seconds', 'age of the oldest queued job by device (0 when none waits)', ['device'], (g, s) => {
      for (const device of DEVICES) {
        const oldest = s.waiting.find((w) => w.device === device)?.oldestCreatedAt;
        g.set({ device }, oldest ? Math.max(0, (s.takenAt - oldest.getTime()) / 1000) : 0);
      }
    });
    gauge('starlab_worker_slots', 'job slots a live worker announces', ['worker', 'device'], (g, s) => {
      for (const w of s.workers) g.set({ worker: w.id, device: w.device }, w.slots);
    });
    gauge('starlab_worker_busy_slots', 'jobs a live worker says it runs', ['worker', 'device'], (g, s) => {
      for (const w of s.workers) g.set({ worker: w.id, device: w.device }, w.running);
    });
    gauge('starlab_worker_heartbeat_age_seconds', 'seconds since a live worker’s last heartbeat', ['worker', 'device'], (g, s) => {
      for (const w of s.workers) g.set({ worker: w.id, device: w.device }, Math.max(0, (s.takenAt - w.lastHeartbeatAt.getTime()) / 1000));
    });
    const jobLabels = ['job_id', 'job_name', 'owner'];
    const labelsOf = (job: RunningJobRow) => ({ job_id: job.id, job_name: job.name, owner: job.owner });
    gauge('starlab_job_progress', 'completed steps / total steps of a running job', jobLabels, (g, s) => {
      for (const job of s.running) g.set(labelsOf(job), job.totalSteps > 0 ? job.currentStep / job.totalSteps : 0);
    }, jobs);
    gauge('starlab_job_step_rate', `steps per second of a running job over its last ${STEP_RATE_WINDOW} stored steps`, jobLabels, (g, s) => {
      for (const job of s.running) {
        const timing = s.stepTimes.find((t) => t.jobId === job.id);
        const rate = timing ? stepRate(timing) : null;
        if (rate !== null) g.set(labelsOf(job), rate);
      }
    }, jobs);
    gauge('starlab_job_metric', `latest canonical training metrics of running jobs (at most ${MAX_TRAINING_GAUGES} names)`, [...jobLabels, 'metric'], (g, s) => {
      for (const job of s.running) {
        const evaluation = s.evaluations.find((e) => e.jobId === job.id)?.metrics ?? {};
        const latest = { ...evaluation, ...(job.latestMetrics ?? {}) };
        for (const metric of trainingGaugeNames(latest)) g.set({ ...labelsOf(job), metric }, latest[metric]);
      }
    }, jobs);
  }

  /** The lab's state for one scrape (shared by every metric it renders), or null if the database could not be read. */
  snapshot(): Promise<LabSnapshot | null> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > SNAPSHOT_TTL_MS) this.cached = { at: now, snapshot: this.read(now) };
    return this.cached.snapshot;
  }

  private async read(takenAt: number): Promise<LabSnapshot | null> {
    try {
      const [submitted, byStatus, waiting, workers, running, warnings] = await Promise.all([
        this.telemetry.jobsSubmitted(),
        this.telemetry.jobsByStatus(),
        this.telemetry.waitingByDevice(),
        this.telemetry.workers(this.config.scheduling.workerStaleMs),
        this.telemetry.runningJobs(),
        this.telemetry.warningCounts(),
      ]);
      const ids = running.map((j) => j.id);
      const [stepTimes, evaluations] = await Promise.all([this.telemetry.recentStepTimes(ids, STEP_RATE_WINDOW), this.telemetry.latestEvaluations(ids)]);
      return {
        takenAt,
        submitted,
        jobsByStatus: new Map(byStatus.map((r) => [r.status, r._count._all])),
        waiting: waiting.map((w) => ({ device: w.device, count: w._count._all, oldestCreatedAt: w._min.createdAt })),
        workers,
        running,
        stepTimes,
        evaluations,
        warnings: warnings.map((w) => ({ detector: w.detector, severity: w.severity, count: w._count._all })),
      };
    } catch (error) {
      this.logger.warn(`lab metrics unavailable for this scrape: ${(error as Error).message}`);
      return null;
    }
  }
}

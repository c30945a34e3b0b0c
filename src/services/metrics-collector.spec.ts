import { Registry } from 'prom-client';
import type { AppConfig } from '../config/config';
import type { TelemetryRepository } from '../repositories/telemetry.repository';
import { MAX_TRAINING_GAUGES, MetricsCollector, stepRate, trainingGaugeNames } from './metrics-collector';

const T0 = new Date('2025-01-01T00:00:00Z').getTime();
const config = { scheduling: { workerStaleMs: 20_000 } } as AppConfig;

function repository(overrides: Partial<Record<keyof TelemetryRepository, jest.Mock>> = {}): TelemetryRepository {
  return {
    jobsSubmitted: jest.fn().mockResolvedValue(7),
    jobsByStatus: jest.fn().mockResolvedValue([{ status: 'running', _count: { _all: 1 } }, { status: 'succeeded', _count: { _all: 5 } }]),
    waitingByDevice: jest.fn().mockResolvedValue([{ device: 'cpu', _count: { _all: 1 }, _min: { createdAt: new Date(T0 - 90_000) } }]),
    workers: jest.fn().mockResolvedValue([{ id: 'w1', device: 'cpu', slots: 2, running: 1, lastHeartbeatAt: new Date(T0 - 1500) }]),
    runningJobs: jest.fn().mockResolvedValue([
      { id: 'j1', name: 'lake', owner: 'ada', currentStep: 30, totalSteps: 120, latestMetrics: { 'reward/mean': 0.25, 'perf/step_ms': 800, 'warmup/loss': 1.5 } },
    ]),
    recentStepTimes: jest.fn().mockResolvedValue([{ jobId: 'j1', steps: 10, firstAt: new Date(T0 - 18_000), lastAt: new Date(T0) }]),
    latestEvaluations: jest.fn().mockResolvedValue([{ jobId: 'j1', step: 20, metrics: { 'eval/sampled/success': 0.5, 'eval/greedy/success': 0.625, 'reward/mean': -1 } }]),
    warningCounts: jest.fn().mockResolvedValue([{ detector: 'kl_overshoot', severity: 'warning', _count: { _all: 2 } }]),
    ...overrides,
  } as unknown as TelemetryRepository;
}

/** The lab's series, then the per-job ones (each registry as GET /metrics serves it). */
async function scrape(repo: TelemetryRepository): Promise<string> {
  const [registry, jobs] = [new Registry(), new Registry()];
  new MetricsCollector(repo, config).register(registry, jobs);
  const lab = await registry.metrics();
  expect(lab).not.toMatch(/job_id=|job_name=|owner=/); // no user's data among the lab's totals
  return `${lab}${await jobs.metrics()}`;
}

describe('MetricsCollector', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('reports jobs, queue, workers and warnings from one read of the database', async () => {
    const repo = repository();
    const text = await scrape(repo);
    expect(text).toContain('starlab_metrics_collector_up 1');
    expect(text).toContain('starlab_jobs_submitted_total 7');
    expect(text).toContain('starlab_jobs{status="running"} 1');
    expect(text).toContain('starlab_jobs{status="succeeded"} 5');
    expect(text).toContain('starlab_jobs{status="queued"} 0');
    expect(text).toContain('starlab_queue_depth{device="cpu"} 1');
    expect(text).toContain('starlab_queue_oldest_wait_seconds{device="cpu"} 90');
    expect(text).toContain('starlab_queue_oldest_wait_seconds{device="gpu"} 0');
    expect(text).toContain('starlab_worker_slots{worker="w1",device="cpu"} 2');
    expect(text).toContain('starlab_worker_busy_slots{worker="w1",device="cpu"} 1');
    expect(text).toContain('starlab_worker_heartbeat_age_seconds{worker="w1",device="cpu"} 1.5');
    expect(text).toContain('starlab_collapse_warnings_total{detector="kl_overshoot",severity="warning"} 2');
    expect(text).toContain('starlab_collapse_warnings_total{detector="grad_norm_spike",severity="critical"} 0');
    // Twelve metrics rendered, one read of each table.
    expect((repo.jobsSubmitted as jest.Mock).mock.calls).toHaveLength(1);
    expect((repo.runningJobs as jest.Mock).mock.calls).toHaveLength(1);
  });

  it('labels running jobs with their progress, step rate and latest metrics, evaluation series included', async () => {
    const text = await scrape(repository());
    const labels = 'job_id="j1",job_name="lake",owner="ada"';
    expect(text).toContain(`starlab_job_progress{${labels}} ${30 / 120}`);
    // 10 steps written over 18 s: 9 intervals.
    expect(text).toContain(`starlab_job_step_rate{${labels}} ${9 / 18}`);
    expect(text).toContain(`starlab_job_metric{${labels},metric="reward/mean"} 0.25`);
    expect(text).toContain(`starlab_job_metric{${labels},metric="perf/step_ms"} 800`);
    // The latest evaluation's success series come from the last step that had one; the latest
    // step's own values win for the other names.
    expect(text).toContain(`starlab_job_metric{${labels},metric="eval/sampled/success"} 0.5`);
    expect(text).toContain(`starlab_job_metric{${labels},metric="eval/greedy/success"} 0.625`);
    expect(text).not.toContain('metric="warmup/loss"');
  });

  it('exports at most MAX_TRAINING_GAUGES names per job whatever the job reports', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`eval/protocol${String(i).padStart(2, '0')}/success`, i]));
    const names = trainingGaugeNames({ ...many, 'reward/mean': 1, 'entropy/mean': 2, 'made/up': 3, 'grad_norm/actor': Number.NaN });
    expect(names).toHaveLength(MAX_TRAINING_GAUGES);
    expect(names.slice(0, 2)).toEqual(['reward/mean', 'entropy/mean']);
    expect(names).not.toContain('made/up');
    expect(names).not.toContain('grad_norm/actor');
    expect(names[2]).toBe('eval/protocol00/success');
  });

  it('has no step rate before two steps are stored', () => {
    expect(stepRate({ jobId: 'j', steps: 1, firstAt: new Date(T0), lastAt: new Date(T0) })).toBeNull();
    expect(stepRate({ jobId: 'j', steps: 3, firstAt: new Date(T0), lastAt: new Date(T0) })).toBeNull();
    expect(stepRate({ jobId: 'j', steps: 3, firstAt: new Date(T0), lastAt: new Date(T0 + 4000) })).toBe(2 / 4);
  });

  it('still answers a scrape when the database cannot be read, with collector_up 0 and no lab series', async () => {
    const text = await scrape(repository({ jobsByStatus: jest.fn().mockRejectedValue(new Error('Connection terminated unexpectedly')) }));
    expect(text).toContain('starlab_metrics_collector_up 0');
    expect(text).not.toMatch(/^starlab_jobs\{/m);
    expect(text).not.toMatch(/^starlab_job_metric\{/m);
  });
});

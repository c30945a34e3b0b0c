import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestStack, tinyJob } from '../support/stack';

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition → series (comments skipped). */
function parseExposition(text: string): Series[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** Every `starlab_…{matchers}` selector in a PromQL expression, with Grafana's `$job` variable as "any". */
function selectors(expr: string): { name: string; matchers: { label: string; op: string; value: string }[] }[] {
  return [...expr.replace(/\$job/g, '.*').matchAll(/(starlab_\w+)(?:\{([^}]*)\})?/g)].map((m) => ({
    name: m[1],
    matchers: [...(m[2] ?? '').matchAll(/(\w+)\s*(=~|!=|!~|=)\s*"([^"]*)"/g)].map((x) => ({ label: x[1], op: x[2], value: x[3] })),
  }));
}

function matches(series: Series, matcher: { label: string; op: string; value: string }): boolean {
  const actual = series.labels[matcher.label] ?? '';
  const regex = new RegExp(`^(?:${matcher.value})$`);
  return { '=': actual === matcher.value, '!=': actual !== matcher.value, '=~': regex.test(actual), '!~': !regex.test(actual) }[matcher.op]!;
}

const dashboard = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docker', 'grafana', 'dashboards', 'starlab.json'), 'utf8'));
const expressions: string[] = [
  ...dashboard.panels.flatMap((panel: { targets?: { expr: string }[] }) => (panel.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.map((v: { definition: string }) => v.definition),
];

/** GET /metrics counts what it serves and reports the lab (jobs, queue, workers, running jobs) as the Grafana dashboard queries it. */
describe('Prometheus metrics and the Grafana dashboard (real HTTP, worker)', () => {
  const token = 'scraper-token-0123456789abcdef';
  const stack = new TestStack({ apiEnv: { STARLAB_METRICS_TOKEN: token } });
  /** What the configured scraper sees (docker/prometheus/prometheus.yml presents the token). */
  const scrape = async () => parseExposition((await stack.request('GET', '/metrics', { key: null, headers: { Authorization: `Bearer ${token}` } })).text);

  beforeAll(async () => {
    await stack.start();
    stack.startWorker('prom-worker');
  }, 60_000);
  afterAll(() => stack.stop(), 30_000);

  it('counts submissions and requests, and labels only running jobs with at most 20 training metrics', async () => {
    const spec = { ...tinyJob({ steps: 5000, checkpointEvery: 0, name: 'watched' }), training: { ...tinyJob().training, steps: 5000, checkpointEvery: 0, evalEvery: 2 } };
    const first = await stack.request('POST', '/v1/jobs', { body: spec, headers: { 'Idempotency-Key': 'prom-1' } });
    expect(first.status).toBe(201);
    expect((await stack.request('POST', '/v1/jobs', { body: spec, headers: { 'Idempotency-Key': 'prom-1' } })).status).toBe(200);
    const queued = await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ name: 'waits-for-gpu' }), device: 'gpu' } });
    expect((await stack.request('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    await stack.waitForJob(first.body.id, (j) => j.status === 'running' && j.currentStep >= 5);

    // Anyone else gets the lab's totals, and nothing that names a user's work.
    for (const authorization of [undefined, 'Bearer not-the-token-0123456789abcdef', `Bearer ${token}x`]) {
      const anonymous = await stack.request('GET', '/metrics', { key: null, headers: authorization ? { Authorization: authorization } : {} });
      expect(anonymous.status).toBe(200);
      expect(anonymous.text).toMatch(/^starlab_jobs\{status="running"\} 1$/m);
      expect(anonymous.text).not.toMatch(/job_id=|job_name=|owner=|watched|admin/);
    }

    const series = await scrape();
    const value = (name: string, labels: Record<string, string> = {}) =>
      series.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
    // Two jobs stored; the replay added none.
    expect(value('starlab_jobs_submitted_total')).toBe(2);
    expect(value('starlab_http_requests_total', { method: 'POST', route: '/v1/jobs', status: '201' })).toBe(2);
    expect(value('starlab_http_requests_total', { method: 'POST', route: '/v1/jobs', status: '200' })).toBe(1);
    // Labelled by the route template, not by the id that was asked for.
    expect(value('starlab_http_requests_total', { method: 'GET', route: '/v1/jobs/:id', status: '404' })).toBe(1);
    expect(series.some((s) => s.labels.route?.includes('00000000'))).toBe(false);
    expect(value('starlab_http_request_duration_seconds_count', { method: 'POST', route: '/v1/jobs' })).toBe(3);
    expect(value('starlab_jobs', { status: 'running' })).toBe(1);
    expect(value('starlab_queue_depth', { device: 'gpu' })).toBe(1);
    expect(value('starlab_queue_oldest_wait_seconds', { device: 'gpu' })).toBeGreaterThan(0);
    expect(value('starlab_worker_slots', { worker: 'prom-worker', device: 'cpu' })).toBe(1);
    expect(value('starlab_worker_busy_slots', { worker: 'prom-worker' })).toBe(1);
    expect(value('starlab_worker_heartbeat_age_seconds', { worker: 'prom-worker' })).toBeLessThan(5);
    expect(value('starlab_job_step_rate', { job_id: first.body.id })).toBeGreaterThan(0);
    const trained = series.filter((s) => s.name === 'starlab_job_metric');
    expect(new Set(trained.map((s) => s.labels.job_id))).toEqual(new Set([first.body.id]));
    const names = trained.map((s) => s.labels.metric);
    expect(names.length).toBeLessThanOrEqual(20);
    expect(names).toEqual(expect.arrayContaining(['reward/mean', 'success/rate', 'entropy/mean', 'grad_norm/actor', 'reward/std_in_group']));
    expect(names.some((n) => /^eval\/.*success/.test(n))).toBe(true);
    expect(trained[0].labels).toMatchObject({ job_name: 'watched', owner: 'admin' });

    // Every series and label value the Grafana dashboard queries is served.
    const missing = expressions.flatMap((expr) =>
      selectors(expr)
        .filter((sel) => !series.some((s) => s.name === sel.name && sel.matchers.every((m) => matches(s, m))))
        .map((sel) => `${sel.name}{${sel.matchers.map((m) => `${m.label}${m.op}"${m.value}"`).join(',')}} in ${expr}`),
    );
    expect(missing).toEqual([]);
    expect(expressions.length).toBeGreaterThan(20);

    // A job that stops running loses its labels at the next scrape.
    await stack.request('POST', `/v1/jobs/${first.body.id}/cancel`);
    await stack.request('POST', `/v1/jobs/${queued.body.id}/cancel`);
    await stack.waitForJob(first.body.id, (j) => j.status === 'cancelled');
    // Scrapes share a snapshot for a second: wait for one taken after both cancels, then look in it.
    const cancelledIn = (scraped: Series[]) => scraped.find((s) => s.name === 'starlab_jobs' && s.labels.status === 'cancelled')?.value;
    let after = await scrape();
    for (const deadline = Date.now() + 10_000; cancelledIn(after) !== 2 && Date.now() < deadline; after = await scrape()) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cancelledIn(after)).toBe(2);
    expect(after.filter((s) => s.name === 'starlab_job_metric' || s.name === 'starlab_job_step_rate')).toEqual([]);
  }, 120_000);
});

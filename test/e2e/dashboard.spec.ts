import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { EVAL_METRICS } from '../../src/training/signals/step-metrics';
import { launchBrowser } from '../support/browser';
import { TestStack, tinyJob } from '../support/stack';

/** Screenshots of every view, for people to look at (gitignored). */
const SHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');
/** With STARLAB_DOCS_SCREENSHOTS=1, the README's picture of the dashboard is taken too (docs/images, committed). */
const DOCS_SHOT = process.env.STARLAB_DOCS_SCREENSHOTS === '1' ? join(__dirname, '..', '..', 'docs', 'images', 'dashboard.png') : null;
/** Fires for certain at step 6 (gradient norm above 0 × its median), as in the collapse e2e test. */
const ALWAYS_SPIKE = [{ detector: 'grad_norm_spike', threshold: 0, warmupSteps: 5 }];

/** A full-page screenshot from the top (the sticky top bar would otherwise sit where the page was scrolled to). */
async function shoot(page: Page, options: { path: string; fullPage: boolean }): Promise<void> {
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot(options);
}

/** The web dashboard in headless Chromium against the real API and a real worker. */
describe('dashboard (headless Chromium, real HTTP, worker)', () => {
  const stack = new TestStack();
  let browser: { context: BrowserContext; close: () => Promise<void> };
  let page: Page;
  let finished: any;
  let running: any;
  const errors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser(); // first: on a new machine it installs chromium
    page = await browser.context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await stack.start();
    // Two slots: the long job and the one in its warm-up train side by side.
    stack.startWorker('dash-worker', { STARLAB_WORKER_SLOTS: '2' });
    const spec = tinyJob({ steps: 8, checkpointEvery: 2, name: 'bandit-spike' });
    finished = (await stack.request('POST', '/v1/jobs', { body: { ...spec, labels: { project: 'demo' }, training: { ...spec.training, evalEvery: 2 }, collapse: { action: 'warn', rules: ALWAYS_SPIKE } } })).body;
    await stack.waitForJob(finished.id, (j) => j.status === 'succeeded', 90_000);
    running = (await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 5000, checkpointEvery: 50, name: 'bandit-long' }) })).body;
    await stack.waitForJob(running.id, (j) => j.status === 'running' && j.currentStep >= 1);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await stack.stop();
  }, 30_000);

  const pointsOf = (title: string) => page.locator(`[data-chart="${title}"]`).getAttribute('data-points').then((p) => JSON.parse(p ?? '{}'));

  it('refuses a wrong key with the problem, then logs in with a key', async () => {
    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.waitForURL(/#\/login$/);
    await page.fill('#api-key', 'sl_not_a_key_000000000000000000');
    await page.click('button[type=submit]');
    await page.locator('.error-box').waitFor();
    expect(await page.locator('.error-box strong').textContent()).toBe('Unauthenticated');
    await shoot(page, { path: join(SHOTS, 'login.png'), fullPage: true });
    errors.length = 0; // the browser logs the refused request; nothing after this may fail
    await page.fill('#api-key', stack.adminKey);
    await page.click('button[type=submit]');
    await page.waitForURL(/#\/jobs$/);
    await page.locator(`tr[data-job-id="${finished.id}"]`).waitFor();
    expect(await page.locator('#whoami-name').textContent()).toBe('admin · admin');
    const row = page.locator(`tr[data-job-id="${finished.id}"]`);
    expect(await row.locator('.status-succeeded').textContent()).toBe('succeeded');
    expect(await row.locator('.severity-critical').textContent()).toBe('1 critical');
    expect(await page.locator(`tr[data-job-id="${running.id}"] .status-running`).count()).toBe(1);
    await shoot(page, { path: join(SHOTS, 'jobs.png'), fullPage: true });
  }, 60_000);

  it('shows a finished job’s curves with every point of the API’s series, warning markers, checkpoint health and transcripts', async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs/${finished.id}`);
    await page.locator('[data-chart="Reward"] canvas').waitFor();
    const rows: { step: number; metrics: Record<string, number> }[] = (await stack.request('GET', `/v1/jobs/${finished.id}/metrics`)).body.data;
    const count = (name: string) => rows.filter((r) => Number.isFinite(r.metrics[name])).length;
    // Step 0 is the evaluation after the warm-up; rollouts are steps 1..8.
    expect(count('reward/mean')).toBe(8);
    expect(await pointsOf('Reward')).toEqual({ 'reward/mean': count('reward/mean') });
    // Rollout success and evaluation success are separate, named series.
    const evaluation = EVAL_METRICS.sampled.success;
    expect(await pointsOf('Success')).toEqual({ 'success/rate': count('success/rate'), [evaluation]: count(evaluation) });
    expect(count(evaluation)).toBe(5); // steps 0, 2, 4, 6, 8
    const legend = await page.locator('[data-chart="Success"] .legend-item').allTextContents();
    expect(legend[0]).toMatch(/^rollout success\/rate/);
    expect(legend[1]).toMatch(new RegExp(`^evaluation ${evaluation}`));
    for (const title of ['In-group reward std', 'Token entropy', 'Gradient norm (pre-clip)', 'Diversity', 'Policy change per update (kl/update)']) {
      const points = await pointsOf(title);
      for (const [name, n] of Object.entries(points)) expect([title, name, n]).toEqual([title, name, count(name)]);
    }
    // kl/update with kl_spike's threshold as this job runs it (the default, 0.5 nats per token).
    expect(count('kl/update')).toBe(8);
    expect(JSON.parse((await page.locator('[data-chart="Policy change per update (kl/update)"]').getAttribute('data-thresholds'))!)).toEqual([0.5]);
    expect(await page.locator('[data-chart="Policy change per update (kl/update)"] .legend-item.threshold').textContent()).toBe('kl_spike threshold 0.5');
    // An 8-step run is labelled at whole steps only.
    const ticks: number[] = JSON.parse((await page.locator('[data-chart="Reward"]').getAttribute('data-x-ticks'))!);
    expect(ticks.length).toBeGreaterThan(1);
    expect(ticks.every((t) => Number.isInteger(t))).toBe(true);
    // The warning at step 6 is marked on every curve.
    expect(await page.locator('.warning-marker[data-step="6"][data-detector="grad_norm_spike"]').count()).toBe(7);
    // Labels; the warm-up as a phase that is done, with its loss curve (a point every 10 steps, here its 3 steps' one).
    expect(await page.locator('.job-header .chip').allTextContents()).toEqual(['project=demo']);
    expect(await page.locator('.warmup-card').getAttribute('data-state')).toBe('done');
    expect(await pointsOf('Warm-up loss')).toEqual({ loss: 1 });
    // Smoothing changes what is drawn, not the data: the legend shows the smoothed last value.
    const raw = await page.locator('[data-chart="Token entropy"] .legend-value').textContent();
    await page.locator('input[aria-label="smoothing"]').fill('0.9');
    await page.locator('[data-chart="Token entropy"][data-smoothing="0.9"]').waitFor();
    expect(await page.locator('[data-chart="Token entropy"] .legend-value').textContent()).not.toBe(raw);
    expect((await pointsOf('Token entropy'))['entropy/mean']).toBe(8);
    await page.locator('input[aria-label="smoothing"]').fill('0');
    expect(await page.locator('.warnings-table tbody tr').count()).toBe(1);
    const health = await page.locator('.checkpoints-table tbody tr').evaluateAll((trs: any[]) => trs.map((tr) => `${tr.dataset.step}:${tr.querySelector('.pill').textContent}`));
    expect(health).toEqual(['8:unhealthy', '6:unhealthy', '4:healthy', '2:healthy', '0:healthy']);
    // Transcripts of the latest step by default, any step on request.
    await page.locator('.trajectory').first().waitFor();
    expect(await page.locator('.trajectories-card h2').textContent()).toBe('Trajectories at step 8');
    expect(await page.locator('.trajectory .observation').first().textContent()).toContain('Arms');
    await page.fill('.step-input', '3');
    await page.locator('.step-input').dispatchEvent('change');
    await page.locator('.trajectories-card h2', { hasText: 'at step 3' }).waitFor();
    expect(await page.locator('.trajectory').count()).toBe(2);
    await shoot(page, { path: join(SHOTS, 'job-finished.png'), fullPage: true });
  }, 60_000);

  it('shows a running warm-up as its own phase, with progress, ETA and loss curve, on the job page and in the list', async () => {
    const spec = tinyJob({ steps: 4, checkpointEvery: 0, name: 'long-warmup' });
    const warming = (await stack.request('POST', '/v1/jobs', { body: { ...spec, training: { ...spec.training, warmup: { steps: 5000, batchSize: 4 } } } })).body;
    await stack.waitForJob(warming.id, (j) => j.status === 'running' && j.warmup.completed >= 20, 120_000);
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs/${warming.id}`);
    await page.locator('.warmup-card[data-state="running"]').waitFor();
    const first = Number(await page.locator('.warmup-step').getAttribute('data-completed'));
    // New reports arrive on the event stream: the phase moves and its loss curve grows.
    await page.waitForFunction((n) => Number((globalThis as any).document.querySelector('.warmup-step').dataset.completed) > n, first, { timeout: 60_000 });
    await page.waitForFunction(() => JSON.parse((globalThis as any).document.querySelector('[data-chart="Warm-up loss"]').dataset.points).loss >= 3, undefined, { timeout: 60_000 });
    expect(await page.locator('.job-progress[data-phase="warm-up"] .job-step').textContent()).toMatch(/^warm-up \d+\/5000$/);
    await page.locator('.warmup-eta').waitFor();
    expect(await page.locator('.warmup-eta').textContent()).toMatch(/^ETA \d/);
    await shoot(page, { path: join(SHOTS, 'job-warmup.png'), fullPage: true });
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs`);
    const row = page.locator(`tr[data-job-id="${warming.id}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-phase')).toBe('warm-up');
    expect(await row.locator('.step-label').textContent()).toMatch(/^warm-up \d+\/5000$/);
    expect(await row.locator('.eta-cell').textContent()).toMatch(/\(warm-up\)$/);
    await stack.request('POST', `/v1/jobs/${warming.id}/cancel`);
  }, 180_000);

  it('shows the evaluations of a job’s checkpoints and its fork lineage, with links both ways', async () => {
    const evaluation = (await stack.request('POST', `/v1/jobs/${finished.id}/evaluations`, { body: { episodes: 4, k: 2 } })).body;
    const fork = (await stack.request('POST', `/v1/jobs/${finished.id}/fork`, { body: { name: 'bandit-spike-fork', overrides: { training: { steps: 10 } } } })).body;
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs/${finished.id}`);
    await page.locator(`.evaluations-table tr[data-evaluation-id="${evaluation.id}"]`).waitFor();
    await page.locator(`.evaluations-table tr[data-evaluation-id="${evaluation.id}"][data-status="succeeded"]`).waitFor({ timeout: 60_000 });
    expect(await page.locator(`tr[data-evaluation-id="${evaluation.id}"] .evaluation-success`).textContent()).toMatch(/^\d+\.\d%$/);
    await page.locator(`.lineage-forks a[data-job-id="${fork.id}"]`).click();
    await page.waitForURL(new RegExp(`#/jobs/${fork.id}$`));
    await page.locator(`.lineage-parent a[data-job-id="${finished.id}"]`).waitFor();
    expect(await page.locator('.lineage-parent').textContent()).toBe(`forked from ${finished.id.slice(0, 8)} at step 8`);
    await stack.request('POST', `/v1/jobs/${fork.id}/cancel`);
  }, 120_000);

  it('badges a succeeded run whose last evaluation is far below its best, and archives it out of the list', async () => {
    // A run that broke on the way: its stored evaluations rise to 0.8, then end at 0.
    const broken = (await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ name: 'broke-late', steps: 20 }), device: 'gpu' } })).body;
    await stack.prisma.stepMetric.createMany({ data: [[0, 0.2], [10, 0.8], [20, 0]].map(([step, value]) => ({ jobId: broken.id, step, metrics: { [EVAL_METRICS.sampled.success]: value } })) });
    await stack.prisma.job.update({ where: { id: broken.id }, data: { status: 'succeeded', currentStep: 20, progress: 1, finishedAt: new Date() } });
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs`);
    const row = page.locator(`tr[data-job-id="${broken.id}"]`);
    await row.locator('.badge-eval-fell').waitFor();
    expect(await row.locator('.badge-eval-fell').textContent()).toBe('eval fell: 0 (best 0.8)');
    expect(await page.locator(`tr[data-job-id="${finished.id}"] .badge-eval-fell`).count()).toBe(0);
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs/${broken.id}`);
    await page.locator('.job-header .badge-eval-fell').waitFor();
    await page.locator('.job-header button', { hasText: 'Archive' }).click();
    await page.locator('.job-header .pill.archived').waitFor();
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs`);
    await page.locator(`tr[data-job-id="${finished.id}"]`).waitFor();
    expect(await page.locator(`tr[data-job-id="${broken.id}"]`).count()).toBe(0);
    await page.locator('input[aria-label="show archived"]').check();
    await page.locator(`tr[data-job-id="${broken.id}"] .pill.archived`).waitFor();
  }, 60_000);

  it('shows an experiment as its table and as curves with the seeds’ spread', async () => {
    const base = { ...tinyJob({ name: 'x', steps: 4 }), device: 'gpu' };
    const experiment = (await stack.request('POST', '/v1/experiments', { body: { name: 'dash-exp', base, grid: { 'algorithm.id': ['starpo-s', 'starpo-grpo'], 'training.seed': [1, 2] } } })).body;
    // Its runs' evaluations, as workers would have stored them: seeds 1 and 2 differ, so each cell has a band.
    for (const cell of experiment.cells) {
      for (const run of cell.runs) {
        const values = [0.2, 0.4, 0.5, 0.6, 0.7].map((v) => v + 0.1 * (run.seed - 1) + 0.05 * cell.index);
        await stack.prisma.stepMetric.createMany({ data: values.map((value, step) => ({ jobId: run.jobId, step, metrics: { [EVAL_METRICS.sampled.success]: value } })) });
        await stack.prisma.job.update({ where: { id: run.jobId }, data: { status: 'succeeded', currentStep: 4, progress: 1 } });
      }
    }
    await page.goto(`${stack.baseUrl}/dashboard/#/experiments`);
    await page.locator(`tr[data-experiment-id="${experiment.id}"] a`).click();
    await page.locator('.cells-table tr[data-cell="1"]').waitFor();
    // Cell 1 (GRPO): seeds end at 0.75 and 0.85: "mean → mean (min–max, 2 seeds)".
    expect(await page.locator('.cells-table tr[data-cell="1"] .cell-main').textContent()).toBe('30.0 → 80.0 (75.0–85.0, 2 seeds)');
    await page.locator('.cells-table .cell-random', { hasText: /^\d+\.\d$/ }).first().waitFor({ timeout: 60_000 });
    await page.locator('.compare-chart canvas').waitFor();
    expect(JSON.parse((await page.locator('.compare-chart [data-points]').getAttribute('data-points'))!)).toEqual({ cell0: 5, cell1: 5 });
    expect(await page.locator('.experiment-jobs tbody tr').count()).toBe(4);
    await shoot(page, { path: join(SHOTS, 'experiment.png'), fullPage: true });
    if (DOCS_SHOT) {
      mkdirSync(join(DOCS_SHOT, '..'), { recursive: true });
      await shoot(page, { path: DOCS_SHOT, fullPage: false });
    }
  }, 120_000);

  it('adds new points to a running job’s curves from the event stream', async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/jobs/${running.id}`);
    await page.locator('[data-chart="Reward"] canvas').waitFor();
    await page.locator('.live-indicator[data-state="live"]').waitFor();
    const before = (await pointsOf('Reward'))['reward/mean'];
    // A function, not a string: the page's CSP forbids evaluating strings.
    await page.waitForFunction((n) => JSON.parse((globalThis as any).document.querySelector('[data-chart="Reward"]').dataset.points)['reward/mean'] > n, before, { timeout: 30_000 });
    const after = (await pointsOf('Reward'))['reward/mean'];
    expect(after).toBeGreaterThan(before);
    // The page's step counter follows the stream too.
    const shownStep = Number(await page.locator('.job-step').getAttribute('data-step'));
    expect(shownStep).toBeGreaterThanOrEqual(after - 1);
    await shoot(page, { path: join(SHOTS, 'job-running.png'), fullPage: true });
  }, 60_000);

  it('shows the queue: who waits for what and why', async () => {
    const waiting = (await stack.request('POST', '/v1/jobs', { body: { ...tinyJob({ name: 'needs-a-gpu' }), device: 'gpu' } })).body;
    await page.goto(`${stack.baseUrl}/dashboard/#/queue`);
    const row = page.locator('.waiting-card tbody tr', { hasText: waiting.id.slice(0, 8) });
    await row.waitFor();
    expect(await row.locator('.reason').textContent()).toMatch(/gpu/i);
    // The long job holds one of the worker's two slots.
    expect(await page.locator('.stat', { hasText: 'CPU slots' }).locator('.stat-value').textContent()).toBe('1 / 2');
    await shoot(page, { path: join(SHOTS, 'queue.png'), fullPage: true });
    await stack.request('POST', `/v1/jobs/${waiting.id}/cancel`);
  }, 60_000);

  it('compares two runs on one chart, picked from a list searchable and filterable by label, status and environment', async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/compare?ids=${finished.id},${running.id}&metric=reward/mean`);
    await page.locator('.compare-chart canvas').waitFor();
    const listed = () => page.locator('.job-picker label').evaluateAll((labels: any[]) => labels.map((l) => l.dataset.jobId));
    await page.fill('input[aria-label="search"]', 'bandit-l');
    await page.waitForFunction((id) => [...(globalThis as any).document.querySelectorAll('.job-picker label')].every((l: any) => l.textContent.includes('bandit-l') || l.querySelector('input').checked) && (globalThis as any).document.querySelector(`.job-picker label[data-job-id="${id}"]`), running.id);
    // The chosen jobs stay listed whatever the filter; the others must match it.
    expect(await listed()).toEqual(expect.arrayContaining([finished.id, running.id]));
    await page.fill('input[aria-label="search"]', '');
    await page.fill('input[aria-label="label"]', 'project=demo');
    const labelled = (await stack.request('GET', '/v1/jobs?label=project%3Ddemo&limit=100')).body.data.length; // the job and its fork, which keeps its labels
    await page.waitForFunction((n) => (globalThis as any).document.querySelector('.picker-info').textContent.startsWith(`${n} matching`), labelled);
    expect(labelled).toBeGreaterThanOrEqual(1);
    await page.fill('input[aria-label="label"]', '');
    await page.selectOption('select[aria-label="picker environment"]', 'sokoban');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.picker-info').textContent.startsWith('0 matching'));
    await page.selectOption('select[aria-label="picker environment"]', '');
    await page.selectOption('select[aria-label="picker status"]', 'running');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.picker-info').textContent.startsWith('1 matching'));
    const legend = await page.locator('.compare-chart .legend-item').allTextContents();
    expect(legend).toHaveLength(2);
    expect(legend[0]).toContain('bandit-spike');
    expect(legend[1]).toContain('bandit-long');
    const points = JSON.parse((await page.locator('.compare-chart [data-points]').getAttribute('data-points'))!);
    expect(points.run0).toBe(8);
    expect(points.run1).toBeGreaterThan(1);
    await shoot(page, { path: join(SHOTS, 'compare.png'), fullPage: true });
  }, 60_000);

  it('ran without page errors, under a strict content security policy', async () => {
    const response = await fetch(`${stack.baseUrl}/dashboard/`);
    expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(errors).toEqual([]);
    await stack.request('POST', `/v1/jobs/${running.id}/cancel`);
  });
});

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { EVAL_METRICS } from '../../src/training/signals/step-metrics';
import { launchBrowser } from '../support/browser';
import { TestStack, tinyJob } from '../support/stack';

/** Screenshots of every view, for people to look at (gitignored). */
const SHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');
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
    stack.startWorker('dash-worker');
    const spec = tinyJob({ steps: 8, checkpointEvery: 2, name: 'bandit-spike' });
    finished = (await stack.request('POST', '/v1/jobs', { body: { ...spec, training: { ...spec.training, evalEvery: 2 }, collapse: { action: 'warn', rules: ALWAYS_SPIKE } } })).body;
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
    for (const title of ['In-group reward std', 'Token entropy', 'Gradient norm (pre-clip)', 'Diversity']) {
      const points = await pointsOf(title);
      for (const [name, n] of Object.entries(points)) expect([title, name, n]).toEqual([title, name, count(name)]);
    }
    // The warning at step 6 is marked on every curve.
    expect(await page.locator('.warning-marker[data-step="6"][data-detector="grad_norm_spike"]').count()).toBe(6);
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
    expect(await page.locator('.stat', { hasText: 'CPU slots' }).locator('.stat-value').textContent()).toBe('1 / 1');
    await shoot(page, { path: join(SHOTS, 'queue.png'), fullPage: true });
    await stack.request('POST', `/v1/jobs/${waiting.id}/cancel`);
  }, 60_000);

  it('compares two runs on one chart', async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/compare?ids=${finished.id},${running.id}&metric=reward/mean`);
    await page.locator('.compare-chart canvas').waitFor();
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

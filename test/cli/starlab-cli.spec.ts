import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVAL_METRICS } from '../../src/training/signals/step-metrics';
import { TestStack, tinyJob } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'starlab.js');
/** Fires for certain at step 6, as in the collapse e2e test. */
const ALWAYS_SPIKE = [{ detector: 'grad_norm_spike', threshold: 0, warmupSteps: 5 }];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `starlab` against the running service (real API and worker), configured by environment. */
describe('starlab CLI (real HTTP, worker)', () => {
  // Webhooks may point at loopback here (nothing listens on port 9), which an admin must allow.
  const stack = new TestStack({ apiEnv: { STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1' } });
  const dir = mkdtempSync(join(tmpdir(), 'starlab-client-'));
  // Asynchronous: the API runs in this process and must keep answering while the CLI waits.
  const starlab = (args: string[], env: Record<string, string> = {}, shell?: string): Promise<Run> =>
    new Promise((resolve) => {
      const [file, argv] = shell ? ['/usr/bin/script', ['-qec', shell, '/dev/null']] : [process.execPath, [BIN, ...args]];
      execFile(file, argv, { cwd: dir, env: { ...process.env, STARLAB_URL: stack.baseUrl, STARLAB_API_KEY: stack.adminKey, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    await stack.start();
    stack.startWorker('cli-worker');
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('exits 2 on usage errors and without a key, 1 naming the problem when the API refuses', async () => {
    expect((await starlab(['frobnicate'])).code).toBe(2);
    expect((await starlab(['show'])).stderr).toContain('expected one job id');
    const noKey = await starlab(['list'], { STARLAB_API_KEY: '' });
    expect([noKey.code, noKey.stderr]).toEqual([2, 'starlab: no API key: set STARLAB_API_KEY or pass --key\n']);
    const wrongKey = await starlab(['list', '--key', 'sl_wrong_000000000000000000000000']);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/^Unauthenticated \(401\)\n {2}\S/);
    writeFileSync(join(dir, 'bad.yaml'), 'environment: { id: bandit }\nalgorithm: { id: starpo-s }\nrollout: { groups: 0 }\nspeed: fast\n');
    const bad = await starlab(['submit', 'bad.yaml']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Invalid request (400)');
    expect(bad.stderr).toContain('  rollout.groups: must be >= 1');
    expect(bad.stderr).toContain('  speed: is not a known field');
    writeFileSync(join(dir, 'broken.json'), '{"environment": ');
    expect(await starlab(['submit', 'broken.json'])).toMatchObject({ code: 2, stderr: expect.stringContaining('broken.json is not valid JSON') });
  }, 60_000);

  it('submits YAML, watches to the end with warnings as they fire, and every bar line fits the terminal', async () => {
    const spec = tinyJob({ steps: 12, checkpointEvery: 4, name: 'cli-watched' });
    writeFileSync(
      join(dir, 'job.yaml'),
      `# a job spec in YAML\nname: ${spec.name}\nenvironment: { id: bandit }\nalgorithm: { id: starpo-s-grpo }\nmodel: ${JSON.stringify(spec.model)}\nrollout: ${JSON.stringify(spec.rollout)}\n` +
        `training: ${JSON.stringify({ ...spec.training, evalEvery: 4 })}\ncollapse: ${JSON.stringify({ action: 'warn', rules: ALWAYS_SPIKE })}\n`,
    );
    const submitted = await starlab(['submit', 'job.yaml', '--quiet', '--idempotency-key', 'cli-1']);
    expect(submitted.code).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // The same key and body: the same job.
    expect((await starlab(['submit', 'job.yaml', '--idempotency-key', 'cli-1'])).stdout).toMatch(new RegExp(`^already submitted cli-watched as job ${id} \\(`));

    // On a 60-column terminal (a pseudo-terminal made by script(1)), by job-id prefix.
    const watched = await starlab([], {}, `stty cols 60; ${process.execPath} ${BIN} watch ${id.slice(0, 8)}`);
    expect(watched.code).toBe(0);
    const screen = watched.stdout.replace(/\r\n/g, '\n');
    expect(screen).toMatch(/⚠ step 6 critical grad_norm_spike: /);
    expect(screen).toContain('job succeeded at step 12/12');
    // The bar redraws with carriage return + "erase line" (ESC [2K); every drawn frame counts.
    const drawn = screen.split('\r\u001b[2K').flatMap((frame) => frame.split('\n')).filter((line) => line.startsWith('['));
    expect(drawn.length).toBeGreaterThan(0);
    for (const line of drawn) expect([line, line.length < 60]).toEqual([line, true]);
    expect(drawn[drawn.length - 1]).toMatch(/12\/12/);
    // Watching a job that has ended replays it: its warnings as earlier ones, and how it ended.
    const replayed = await starlab(['watch', id]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(/\(earlier\) ⚠ step 6 critical grad_norm_spike: /);
    expect(replayed.stdout).toContain('job succeeded at step 12/12');

    const shown = await starlab(['show', id]);
    expect(shown.stdout).toContain('status      succeeded');
    expect(shown.stdout).toContain('warnings    1 critical, 0 warning, 0 info');
    expect(shown.stdout).toMatch(/checkpoints 0:healthy 4:healthy 8:unhealthy 12:unhealthy/);
    const listed = await starlab(['list', '--status', 'succeeded']);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+STATUS\s+OWNER/);
    expect(listed.stdout).toContain(id.slice(0, 8));

    // Metrics as CSV: one row per stored step, a column per metric.
    const evaluation = EVAL_METRICS.sampled.success;
    const api = (await stack.request('GET', `/v1/jobs/${id}/metrics?names=reward/mean,${evaluation}`)).body.data;
    const out = await starlab(['metrics', id, '--names', `reward/mean,${evaluation}`, '--out', 'm.csv']);
    expect(out.code).toBe(0);
    const lines = readFileSync(join(dir, 'm.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe(`step,reward/mean,${evaluation}`);
    expect(lines).toHaveLength(1 + api.length);
    expect(lines[1]).toBe(`0,,${api[0].metrics[evaluation]}`);
    expect(lines[2]).toBe(`1,${api[1].metrics['reward/mean']},`);

    // The latest checkpoint, then a chosen one, byte for byte.
    const checkpoints = (await stack.request('GET', `/v1/jobs/${id}/checkpoints`)).body.data;
    const latest = await starlab(['download', id]);
    expect(latest.stdout).toBe(`saved ${id}-step12.starlab-ckpt (${checkpoints[checkpoints.length - 1].sizeBytes} bytes, step 12, unhealthy)\n`);
    expect(statSync(join(dir, `${id}-step12.starlab-ckpt`)).size).toBe(checkpoints[checkpoints.length - 1].sizeBytes);
    await starlab(['download', id, '--step', '4', '--out', 'four.ckpt']);
    expect(readFileSync(join(dir, 'four.ckpt')).equals(Buffer.from(await (await fetch(`${stack.baseUrl}${checkpoints[1].downloadUrl}`, { headers: { Authorization: `Bearer ${stack.adminKey}` } })).arrayBuffer()))).toBe(true);
    expect((await starlab(['download', id, '--step', '5'])).stderr).toContain('has no checkpoint at step 5; it has steps 0, 4, 8, 12');

    // The downloaded checkpoint played here, without the service, as a worker plays it: the same numbers.
    writeFileSync(join(dir, 'job.json'), (await starlab(['show', id, '--json'])).stdout);
    const local = await starlab(['evaluate', '--checkpoint', 'four.ckpt', '--spec', 'job.json', '--env-config', '{"variant":"alt"}', '--episodes', '8', '--k', '2', '--temperature', '1', '--json'], { STARLAB_API_KEY: '' });
    expect(local.code).toBe(0);
    const created = await stack.request('POST', `/v1/jobs/${id}/evaluations`, { body: { checkpointId: checkpoints[1].id, environment: { config: { variant: 'alt' } }, episodes: 8, k: 2, temperature: 1 } });
    let served = created.body;
    for (const deadline = Date.now() + 60_000; ['queued', 'running'].includes(served.status) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      served = (await stack.request('GET', created.headers.get('location')!)).body;
    }
    // (The service's meanReturn has been through a JSON column: equal to the last few bits.)
    expect(JSON.parse(local.stdout)).toMatchObject({ step: 4, k: 2, success: served.success, passAtK: served.passAtK, meanReturn: expect.closeTo(served.meanReturn, 12), samples: served.samples });
    const human = await starlab(['evaluate', '--checkpoint', 'four.ckpt', '--episodes', '4', '--k', '1']);
    expect(human.stdout).toMatch(/^checkpoint step 4 on bandit \{\}: 4 seeds × 1, temperature 0.5 \(wasm, [\d.]+ s\)\nsuccess [\d.]+% {2}pass@1 [\d.]+%/);
    const refused = await starlab(['evaluate', '--checkpoint', 'four.ckpt', '--env', 'sokoban']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^starlab: this checkpoint cannot play that environment:\nenvironment\.id: the checkpoint's vocabulary has no /);
    // A finished job cannot be cancelled: the problem's title and detail.
    const conflict = await starlab(['cancel', id]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/^Conflict \(409\)\n {2}.+/);
  }, 120_000);

  it('pauses, resumes and cancels a running job', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 5000, checkpointEvery: 0, name: 'cli-long' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'running' && j.currentStep >= 2);
    expect((await starlab(['pause', job.id])).stdout).toMatch(new RegExp(`^job ${job.id}: (running \\(pausing after its current step\\)|paused)\\n$`));
    await stack.waitForJob(job.id, (j) => j.status === 'paused');
    expect((await starlab(['resume', job.id])).stdout).toBe(`job ${job.id}: queued\n`);
    await stack.waitForJob(job.id, (j) => j.status === 'running');
    expect((await starlab(['cancel', job.id])).code).toBe(0);
    const watched = await starlab(['watch', job.id]);
    expect(watched.code).toBe(1); // cancelled, not succeeded
    expect(watched.stdout).toMatch(/cancelled/);
  }, 120_000);

  it('issues, lists and revokes API keys; a revoked key is refused', async () => {
    const created = await starlab(['keys', 'create', '--name', 'laptop']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(created.stderr).toContain('shown only once');
    expect((await starlab(['whoami'], { STARLAB_API_KEY: key })).stdout).toMatch(/^admin \(admin, /);
    const listed = await starlab(['keys', 'list', '--json']);
    const laptop = JSON.parse(listed.stdout).find((k: { name: string }) => k.name === 'laptop');
    expect(laptop).toMatchObject({ revokedAt: null, current: false });
    expect((await starlab(['keys', 'list'])).stdout).toMatch(/laptop\s+\S+…/);
    expect((await starlab(['keys', 'revoke', laptop.id])).stdout).toBe(`revoked API key ${laptop.id}\n`);
    const refused = await starlab(['whoami'], { STARLAB_API_KEY: key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Unauthenticated \(401\)/);
    expect((await starlab(['keys', 'create'])).stderr).toContain('needs --name');
  }, 60_000);

  it('shows the warm-up as its own phase in watch, show and list, then the RL steps', async () => {
    const spec = { ...tinyJob({ steps: 2, checkpointEvery: 1, name: 'cli-warmup' }), training: { ...tinyJob().training, steps: 2, checkpointEvery: 1, warmup: { steps: 60, batchSize: 4 } } };
    writeFileSync(join(dir, 'warm.json'), JSON.stringify(spec));
    // Into a pipe, the warm-up prints every fifth report (50 steps) and its last, then the RL steps.
    const watched = await starlab(['submit', 'warm.json', '--watch']);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/warm-up format \[#+\.*\] 50\/60 {2}loss \d/);
    expect(watched.stdout).toMatch(/warm-up format \[#+\] 60\/60 {2}loss \d/);
    expect(watched.stdout.indexOf('60/60')).toBeLessThan(watched.stdout.indexOf('2/2'));
    const id = /as job ([0-9a-f-]{36})/.exec(watched.stdout)![1];
    const shown = await starlab(['show', id]);
    expect(shown.stdout).toMatch(/ {2}warm-up {5}format, 60 steps, done in \d+s, loss [\d.]+ → [\d.]+\n/);
    expect(shown.stdout).toContain('  progress    step 2/2 (100.0%)');
    const warmup = (await stack.request('GET', `/v1/jobs/${id}/warmup`)).body;
    expect(warmup).toMatchObject({ kind: 'format', steps: 60, state: 'done', completed: 60 });
    expect(warmup.loss.map((p: { step: number }) => p.step)).toEqual([10, 20, 30, 40, 50, 60]);
    expect((await starlab(['list'])).stdout).toMatch(/cli-warmup\s+succeeded\s+admin\s+bandit\/starpo-s-grpo\s+step 2\/2\s+-/);
  }, 120_000);

  it('forks, rolls back and evaluates on a worker; archives; says how long a prefix must be', async () => {
    const { body: job } = await stack.request('POST', '/v1/jobs', { body: tinyJob({ steps: 4, checkpointEvery: 2, name: 'cli-actions' }) });
    await stack.waitForJob(job.id, (j) => j.status === 'succeeded', 90_000);
    expect(await starlab(['show', job.id.slice(0, 3)])).toMatchObject({ code: 2, stderr: `starlab: ${job.id.slice(0, 3)}: a job id prefix needs at least 4 characters\n` });

    const forked = await starlab(['fork', job.id.slice(0, 8), '--step', '2', '--set', 'training.steps=6', '--set', 'training.learningRate=0.0005', '--name', 'cli-fork']);
    expect(forked.stdout).toMatch(new RegExp(`^forked job ${job.id} at step 2 as cli-fork ([0-9a-f-]{36}) \\(queued; it trains steps 3–6\\)\\n$`));
    const forkId = /as cli-fork (\S+)/.exec(forked.stdout)![1];
    const child = (await stack.request('GET', `/v1/jobs/${forkId}`)).body;
    expect([child.forkedFrom, child.spec.training.learningRate, child.totalSteps]).toEqual([{ jobId: job.id, step: 2 }, 0.0005, 6]);
    expect((await starlab(['fork', job.id, '--set', 'model.config.layers=3'])).stderr).toMatch(/^Invalid request \(400\)/);
    await stack.waitForJob(forkId, (j) => j.status === 'succeeded', 90_000);

    // A worker plays the checkpoint at step 2 on the bandit's unseen arm names.
    const evaluated = await starlab(['evaluate', job.id, '--step', '2', '--env-config', '{"variant":"alt"}', '--episodes', '8', '--k', '2']);
    expect(evaluated.code).toBe(0);
    expect(evaluated.stdout).toMatch(/^checkpoint step 2 on bandit \{"variant":"alt"[^}]*\}: 8 seeds × 2, temperature 0.5 \([^)]+\)\nsuccess [\d.]+% {2}pass@2 [\d.]+% {2}well-formed turns [\d.]+%/);
    const queued = await starlab(['evaluate', job.id, '--no-wait', '--episodes', '4', '--k', '1']);
    expect(queued.stdout).toMatch(/^evaluation \S+ of job \S+ at step 4: queued/);

    // Back to step 2 with a lower learning rate: it trains steps 3–4 again.
    expect((await starlab(['rollback', job.id, '--step', '2', '--learning-rate', '0.0005'])).stdout).toBe(`job ${job.id} rolled back to step 2: queued, to train steps 3–4\n`);
    await stack.waitForJob(job.id, (j) => j.status === 'succeeded' && j.attempt === 2, 90_000);

    expect((await starlab(['archive', job.id])).stdout).toBe(`job ${job.id} archived (starlab list --archived shows it)\n`);
    expect((await starlab(['list'])).stdout).not.toContain(job.id.slice(0, 8));
    expect((await starlab(['list', '--archived'])).stdout).toContain(job.id.slice(0, 8));
  }, 240_000);

  it('submits an experiment, shows its table, cancels it; manages webhooks', async () => {
    writeFileSync(join(dir, 'exp.yaml'), `name: cli-exp\nbase: ${JSON.stringify(tinyJob({ steps: 5000, checkpointEvery: 0 }))}\ngrid:\n  training.seed: [1, 2]\n`);
    const submitted = await starlab(['experiment', 'submit', 'exp.yaml']);
    expect(submitted.stdout).toMatch(/^submitted experiment cli-exp as ([0-9a-f-]{36}): 1 cells, 2 jobs \(queued\)\n$/);
    const id = /as (\S+):/.exec(submitted.stdout)![1];
    const shown = await starlab(['experiment', 'show', id.slice(0, 6)]);
    expect(shown.stdout).toMatch(/CELL\s+AFTER WARM-UP → AFTER RL\s+SEEDS DONE\s+RANDOM\s+OPTIMUM\/EXPERT\n/);
    expect(shown.stdout).toMatch(/\nbase\s+…\s+0\/2\s/);
    expect(shown.stdout).toMatch(/cli-exp-c1-s1\s+1\s/);
    expect((await starlab(['experiment', 'list'])).stdout).toMatch(/cli-exp\s+\S+\s+admin\s+1\s+2\s/);
    const cancelled = await starlab(['experiment', 'cancel', id]);
    expect(cancelled.stdout).toMatch(new RegExp(`^experiment ${id}: cancel 2 of 2 jobs( \\(\\d running: requested, carried out within seconds\\))?; now `));
    expect((await starlab(['experiment', 'show', 'zz'])).stderr).toBe('starlab: zz is not an experiment id\n');

    const refused = await starlab(['webhooks', 'create', '--endpoint', 'ftp://example.org/hook']);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^Invalid request \(400\)\n(.|\n)*body\.url/)]);
    const hook = await starlab(['webhooks', 'create', '--endpoint', 'http://127.0.0.1:9/hook', '--events', 'job.succeeded,collapse.warning']);
    expect([hook.code, hook.stdout]).toEqual([0, expect.stringMatching(/^whsec_\S+\n$/)]);
    const webhookId = JSON.parse((await starlab(['webhooks', 'list', '--json'])).stdout)[0].id;
    expect((await starlab(['webhooks', 'list'])).stdout).toMatch(/http:\/\/127\.0\.0\.1:9\/hook\s+job\.succeeded,collapse\.warning\s+yes/);
    expect((await starlab(['webhooks', 'test', webhookId])).stdout).toMatch(/^test delivery \S+: \w+/);
    expect((await starlab(['webhooks', 'deliveries', webhookId])).stdout).toMatch(/webhook\.test/);
    expect((await starlab(['webhooks', 'delete', webhookId])).stdout).toBe(`deleted webhook ${webhookId}\n`);
    expect((await starlab(['webhooks', 'frob'])).code).toBe(2);
  }, 120_000);
});

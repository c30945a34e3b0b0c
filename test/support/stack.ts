import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ApiModule } from '../../src/api.module';
import { configureHttp } from '../../src/api/http';
import { APP_CONFIG, AppConfig, loadConfig } from '../../src/config/config';
import { PrismaService } from '../../src/repositories/prisma.service';
import { AuthService } from '../../src/services/auth.service';
import { DispatchService } from '../../src/services/dispatch.service';
import { WebhookService } from '../../src/services/webhook.service';
import { TestDatabase, createTestDatabase } from './database';
import { freePort } from './servers';
import { TYPESCRIPT_LOADER as REGISTER } from '../../src/repositories/typescript-child';

const ROOT = join(__dirname, '..', '..');
export const REDIS_URL = process.env.STARLAB_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Environment of the processes of one test stack: its own database and queue namespace. */
export function stackEnv(database: TestDatabase, queuePrefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    REDIS_URL,
    STARLAB_QUEUE_PREFIX: queuePrefix,
    STARLAB_BACKEND: 'wasm',
    STARLAB_LOCK_DURATION_MS: '3000',
    STARLAB_STALLED_INTERVAL_MS: '1000',
    STARLAB_CONTROL_POLL_MS: '200',
    STARLAB_DISPATCH_INTERVAL_MS: '200',
    STARLAB_HEARTBEAT_MS: '500',
    STARLAB_WEBHOOK_RETRY_BASE_MS: '200',
    STARLAB_WEBHOOK_POLL_MS: '100',
    ...extra,
  };
}

/** A service entry point (src/worker.ts, src/main.ts) as a real process, running from the TypeScript sources. */
class ServiceProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output = '';

  constructor(entry: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, ['-r', REGISTER, join(ROOT, 'src', entry)], {
      cwd: ROOT,
      env: { ...process.env, ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk) => (this.output += chunk));
    this.child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** A worker as a real process (so it can be SIGKILLed), running from the TypeScript sources. */
export class WorkerProcess extends ServiceProcess {
  constructor(env: Record<string, string>, name: string) {
    super('worker.ts', { ...env, STARLAB_WORKER_NAME: name });
  }
}

/** The API as a real process (src/main.ts), so a test can stop and restart it. */
export class ApiProcess extends ServiceProcess {
  constructor(
    env: Record<string, string>,
    readonly port: number,
  ) {
    super('main.ts', { ...env, PORT: String(port) });
  }

  /** Resolves once GET /health answers 200; throws if the process exits first. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.alive) {
      try {
        if ((await fetch(`http://127.0.0.1:${this.port}/health`)).ok) return;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`API process on port ${this.port} did not become ready:\n${this.output.slice(-3000)}`);
  }
}

export interface TestStackOptions {
  /** Postgres server the test database is created on (default: STARLAB_TEST_DATABASE_URL or the local one). */
  databaseBaseUrl?: string;
  /** Redis of the API and the workers (default: STARLAB_TEST_REDIS_URL or the local one). */
  redisUrl?: string;
  /**
   * `in-process` (default): the API runs in the test process; `process`: as its own process on a
   * fixed port (see stopApi / startApi / restartApi), for tests that restart it.
   */
  api?: 'in-process' | 'process';
  /** Extra environment of the API (e.g. STARLAB_RATE_LIMIT_PER_MINUTE). */
  apiEnv?: Record<string, string>;
  /**
   * null: STARLAB_QUEUE_PREFIX is left unset, so the processes derive their namespace from the
   * database as a deployment does by default (use a Redis of the test's own: PrivateRedis).
   */
  queuePrefix?: null;
}

/**
 * The API in this process on an ephemeral port (real HTTP), over a fresh database and its own
 * queue prefix on the local Redis, with an admin key; workers are started as separate processes.
 */
export class TestStack {
  readonly adminKey = `admin_${randomBytes(16).toString('hex')}`;
  readonly queuePrefix = `test-${randomBytes(4).toString('hex')}`;
  baseUrl = '';
  app!: NestExpressApplication;
  config!: AppConfig;
  database!: TestDatabase;
  /** The API process (option `api: 'process'` only). */
  api: ApiProcess | null = null;
  private readonly workers: WorkerProcess[] = [];
  private apiPort = 0;

  constructor(private readonly options: TestStackOptions = {}) {}

  get redisUrl(): string {
    return this.options.redisUrl ?? REDIS_URL;
  }

  /** Environment of this stack's processes. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env = stackEnv(this.database, this.queuePrefix, { REDIS_URL: this.redisUrl, ...extra });
    if (this.options.queuePrefix === null && !('STARLAB_QUEUE_PREFIX' in extra)) delete env.STARLAB_QUEUE_PREFIX;
    return env;
  }

  async start(): Promise<this> {
    this.database = await createTestDatabase(this.options.databaseBaseUrl);
    this.config = loadConfig(this.env(this.apiEnv()));
    if (this.options.api === 'process') {
      this.apiPort = await freePort();
      this.baseUrl = `http://127.0.0.1:${this.apiPort}`;
      await this.startApi();
      return this;
    }
    const module = await Test.createTestingModule({ imports: [ApiModule] }).overrideProvider(APP_CONFIG).useValue(this.config).compile();
    this.app = module.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: ['error', 'warn'] });
    configureHttp(this.app, this.config);
    await this.app.init();
    await this.app.get(AuthService).bootstrapAdminKey(this.adminKey);
    this.app.get(DispatchService).start();
    this.app.get(WebhookService).start();
    await this.app.listen(0, '127.0.0.1');
    this.baseUrl = `http://127.0.0.1:${(this.app.getHttpServer().address() as AddressInfo).port}`;
    return this;
  }

  private apiEnv(): Record<string, string> {
    return { STARLAB_ADMIN_KEY: this.adminKey, STARLAB_BODY_LIMIT_BYTES: '65536', ...this.options.apiEnv };
  }

  get prisma(): PrismaService {
    if (!this.app) throw new Error('stack.prisma needs the in-process API');
    return this.app.get(PrismaService);
  }

  /** Starts the API process (option `api: 'process'`) on the stack's port and waits until it answers. */
  async startApi(): Promise<ApiProcess> {
    if (this.options.api !== 'process') throw new Error("startApi needs the option api: 'process'");
    if (this.api?.alive) throw new Error('the API process is already running');
    this.api = new ApiProcess(this.env(this.apiEnv()), this.apiPort);
    await this.api.ready();
    return this.api;
  }

  /**
   * Stops the API process with `signal` and waits for it to exit; if it has not exited after
   * `graceMs`, SIGKILLs it (`forced`). `exit` is its exit code, or the signal that ended it.
   */
  async stopApi(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<{ exit: number | NodeJS.Signals | null; forced: boolean }> {
    const api = this.api;
    let forced = false;
    if (api?.alive) {
      api.kill(signal);
      const timer = setTimeout(() => {
        forced = true;
        api.kill('SIGKILL');
      }, graceMs);
      await api.exited.finally(() => clearTimeout(timer));
    }
    return { exit: api ? (api.child.exitCode ?? api.child.signalCode) : null, forced };
  }

  async restartApi(signal: NodeJS.Signals = 'SIGTERM', graceMs?: number): Promise<ApiProcess> {
    await this.stopApi(signal, graceMs);
    return this.startApi();
  }

  startWorker(name = `worker-${this.workers.length + 1}`, extra: Record<string, string> = {}): WorkerProcess {
    const worker = new WorkerProcess(this.env(extra), name);
    this.workers.push(worker);
    return worker;
  }

  async request<T = any>(method: string, path: string, options: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<HttpResult<T>> {
    const key = options.key === undefined ? this.adminKey : options.key;
    const headers: Record<string, string> = { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...options.headers };
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['Content-Type'] ??= 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  /** Polls GET /v1/jobs/{id} until `predicate` holds. */
  async waitForJob(id: string, predicate: (job: any) => boolean, timeoutMs = 60_000, key?: string): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.request('GET', `/v1/jobs/${id}`, { key });
      if (predicate(body)) return body;
      if (Date.now() > deadline) throw new Error(`job ${id} did not reach the expected state; last: ${JSON.stringify({ status: body.status, step: body.currentStep, error: body.error })}\n${[...this.workers, ...(this.api ? [this.api] : [])].map((w) => w.output.slice(-3000)).join('\n---\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    for (const process_ of [...this.workers, ...(this.api ? [this.api] : [])]) {
      if (process_.alive) {
        process_.kill('SIGKILL');
        await process_.exited;
      }
    }
    await this.app?.close();
    await this.database?.drop();
  }
}

/** A small, quick job: bandit, a tiny model, real training steps. */
export function tinyJob(overrides: { steps?: number; checkpointEvery?: number; name?: string; dModel?: number; groups?: number } = {}) {
  return {
    name: overrides.name ?? 'tiny-bandit',
    environment: { id: 'bandit' },
    algorithm: { id: 'starpo-s-grpo' },
    model: { config: { layers: 1, dModel: overrides.dModel ?? 16, contextLength: 40 } },
    rollout: { groups: overrides.groups ?? 2, groupSize: 4, maxTokensPerTurn: 12 },
    training: {
      steps: overrides.steps ?? 6,
      evalEvery: 0,
      evalEpisodes: 8,
      checkpointEvery: overrides.checkpointEvery ?? 2,
      trajectoryTextSample: 2,
      warmup: { steps: 3, batchSize: 8 },
    },
  };
}

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
import { TestDatabase, createTestDatabase } from './database';

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
    ...extra,
  };
}

/** A worker as a real process (so it can be SIGKILLed), running from the TypeScript sources. */
export class WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output = '';

  constructor(env: Record<string, string>, name: string) {
    this.child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'src', 'worker.ts')], {
      cwd: ROOT,
      env: { ...process.env, ...env, STARLAB_WORKER_NAME: name, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk) => (this.output += chunk));
    this.child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
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
  private readonly workers: WorkerProcess[] = [];

  async start(): Promise<this> {
    this.database = await createTestDatabase();
    this.config = loadConfig({ ...stackEnv(this.database, this.queuePrefix), STARLAB_ADMIN_KEY: this.adminKey, STARLAB_BODY_LIMIT_BYTES: '65536' });
    const module = await Test.createTestingModule({ imports: [ApiModule] }).overrideProvider(APP_CONFIG).useValue(this.config).compile();
    this.app = module.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: ['error', 'warn'] });
    configureHttp(this.app, this.config);
    await this.app.init();
    await this.app.get(AuthService).bootstrapAdminKey(this.adminKey);
    this.app.get(DispatchService).start();
    await this.app.listen(0, '127.0.0.1');
    this.baseUrl = `http://127.0.0.1:${(this.app.getHttpServer().address() as AddressInfo).port}`;
    return this;
  }

  get prisma(): PrismaService {
    return this.app.get(PrismaService);
  }

  startWorker(name = `worker-${this.workers.length + 1}`, extra: Record<string, string> = {}): WorkerProcess {
    const worker = new WorkerProcess(stackEnv(this.database, this.queuePrefix, extra), name);
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
      if (Date.now() > deadline) throw new Error(`job ${id} did not reach the expected state; last: ${JSON.stringify({ status: body.status, step: body.currentStep, error: body.error })}\n${this.workers.map((w) => w.output.slice(-3000)).join('\n---\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    for (const worker of this.workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.kill('SIGKILL');
        await worker.exited;
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

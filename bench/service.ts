/**
 * The real service for benches: a fresh database, an API process and a worker process on a
 * random port, with an admin key. What bench/api and bench/rollback measure runs through it.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../test/support/database';
import { TYPESCRIPT_LOADER as REGISTER } from '../src/repositories/typescript-child';

const ROOT = join(__dirname, '..');
export const BENCH_KEY = 'bench_admin_key_0123456789abcdef';

export interface BenchService {
  base: string;
  database: TestDatabase;
  /** JSON request with the admin key. */
  api<T>(path: string, init?: RequestInit): Promise<T>;
  /** Polls the job until it has finished, once a second; returns its last status. */
  waitForJob(id: string): Promise<string>;
  stop(): Promise<void>;
}

/** Each run takes a prefix of its own: a deployment claims its prefix in Redis, and a later bench on the same port has another database. */
export async function startService(extraEnv: Record<string, string> = {}): Promise<BenchService> {
  const database = await createTestDatabase();
  const port = String(3900 + Math.floor(Math.random() * 90));
  const env = { DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:6379', PORT: port, STARLAB_ADMIN_KEY: BENCH_KEY, STARLAB_QUEUE_PREFIX: `bench-${port}-${Date.now().toString(36)}`, STARLAB_BACKEND: 'wasm', ...extraEnv };
  const start = (entry: string): ChildProcess => spawn(process.execPath, ['-r', REGISTER, join(ROOT, 'src', entry)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore' });
  const processes = [start('main.ts'), start('worker.ts')];
  const base = `http://127.0.0.1:${port}`;
  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(`${base}${path}`, { ...init, headers: { Authorization: `Bearer ${BENCH_KEY}`, 'Content-Type': 'application/json', ...init.headers } });
    return (await response.json()) as T;
  };
  for (let i = 0; i < 60 && !(await fetch(`${base}/ready`).then((r) => r.ok).catch(() => false)); i++) await new Promise((r) => setTimeout(r, 500));
  return {
    base,
    database,
    api,
    async waitForJob(id) {
      for (;;) {
        const { status } = await api<{ status: string }>(`/v1/jobs/${id}`);
        if (['succeeded', 'failed', 'cancelled'].includes(status)) return status;
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
    async stop() {
      for (const p of processes) p.kill('SIGKILL');
      await database.drop();
    },
  };
}

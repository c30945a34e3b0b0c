/**
 * Private Redis and PostgreSQL servers for tests that stop or restart a server: each runs on its
 * own free port with its own data directory, so the machine's shared Postgres (5432) and Redis
 * (6379) are never touched. Every server can be stopped, started and restarted, and destroy()
 * removes it and its files. A watchdog process does the same if the test process dies first
 * (a crash, a kill, a hook that timed out), so no server outlives its tests.
 */
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PG_BIN = process.env.STARLAB_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.STARLAB_TEST_REDIS_SERVER ?? 'redis-server';

/** A TCP port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once something accepts TCP connections on the port (or `accepting: false`: once nothing does). */
export async function waitForPort(port: number, { accepting = true, timeoutMs = 15_000 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open === accepting) return;
    if (Date.now() > deadline) throw new Error(`port ${port} still ${accepting ? 'closed' : 'open'} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `script` (sh) once this process has gone, however it ended; kill() the returned watchdog
 * to cancel. Detached and unreferenced: it keeps nothing waiting.
 */
function watchdog(script: string): ChildProcess {
  const child = spawn('/bin/sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${script}`], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/**
 * A Redis of its own, in memory only (`--save '' --appendonly no`): after restart() it comes back
 * EMPTY on the same port, which is what a Redis restart without persistence looks like to clients.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly guard: ChildProcess;
  output = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {
    this.guard = watchdog(`redis-cli -p ${port} shutdown nosave >/dev/null 2>&1; rm -rf '${dir}'`);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), 'starlab-redis-')));
    await redis.start();
    return redis;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (this.output = (this.output + chunk).slice(-20_000)));
    child.stderr!.on('data', (chunk) => (this.output = (this.output + chunk).slice(-20_000)));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.child = child;
    const failed = this.exited.then(() => {
      throw new Error(`redis-server on port ${this.port} exited at start:\n${this.output}`);
    });
    await Promise.race([waitForPort(this.port), failed]);
  }

  /** Kills the server (SIGKILL by default: nothing is saved anyway) and waits until the port is closed. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    await this.exited;
    this.child = null;
    await waitForPort(this.port, { accepting: false });
  }

  /** Stop and start again on the same port: all data is gone. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
    this.guard.kill();
  }
}

/**
 * A PostgreSQL 15 cluster of its own (initdb + pg_ctl) in a temporary directory, listening on
 * 127.0.0.1:<free port> and a private socket directory, trust auth, durability switched off for
 * speed. Postgres refuses to run as root, so as root its commands run as the `postgres` user.
 */
export class PrivatePostgres {
  private readonly guard: ChildProcess;

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {
    const [file, args] = this.command(join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
    this.guard = watchdog(`${[file, ...args].map((a) => `'${a}'`).join(' ')} >/dev/null 2>&1; rm -rf '${dir}'`);
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  get socketDir(): string {
    return join(this.dir, 'socket');
  }

  get logFile(): string {
    return join(this.dir, 'postgres.log');
  }

  /** Base connection string (the `postgres` database), for createTestDatabase(baseUrl). */
  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'starlab-pg-'));
    const pg = new PrivatePostgres(await freePort(), dir);
    try {
      mkdirSync(pg.socketDir);
      if (isRoot()) for (const path of [dir, pg.socketDir]) chownSync(path, postgresIds().uid, postgresIds().gid);
      await run(
        ...pg.command(join(PG_BIN, 'initdb'), ['-D', pg.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']),
      );
      const settings = {
        port: pg.port,
        listen_addresses: "'127.0.0.1'",
        unix_socket_directories: `'${pg.socketDir}'`,
        fsync: 'off',
        synchronous_commit: 'off',
        full_page_writes: 'off',
        max_connections: 100,
        shared_buffers: "'32MB'",
      };
      const conf = Object.entries(settings).map(([key, value]) => `${key} = ${value}`).join('\n');
      appendFileSync(join(pg.dataDir, 'postgresql.conf'), `\n# starlab test server\n${conf}\n`);
      await pg.start();
      return pg;
    } catch (error) {
      await pg.destroy();
      throw error;
    }
  }

  get running(): boolean {
    return existsSync(join(this.dataDir, 'postmaster.pid'));
  }

  async start(): Promise<void> {
    try {
      await run(...this.command(join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '30', 'start']));
    } catch (error) {
      throw new Error(`postgres on port ${this.port} did not start: ${(error as Error).message}\n${this.log()}`, { cause: error });
    }
  }

  /**
   * `fast` (default) disconnects every client (they see 57P01) and shuts down cleanly;
   * `immediate` is a crash as far as clients can tell.
   */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (!this.running) return;
    await run(...this.command(join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-m', mode, '-w', '-t', '30', 'stop']));
    await waitForPort(this.port, { accepting: false });
  }

  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.stop(mode);
    await this.start();
  }

  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
    this.guard.kill();
  }

  /** The server log's tail, for failure messages. */
  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').slice(-5000) : '';
  }

  /** [file, args] running as the postgres user when this process is root. */
  private command(file: string, args: string[]): [string, string[]] {
    return isRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

let ids: { uid: number; gid: number } | null = null;
function postgresIds(): { uid: number; gid: number } {
  ids ??= {
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  };
  return ids;
}

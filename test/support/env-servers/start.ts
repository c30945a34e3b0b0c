/**
 * startEnvServer(kind, options): an environment server in a process of its own, on a free port,
 * for the tests of remote environments. Resolves once the server accepts connections; stop() kills
 * it (a watchdog does so too if the test process dies first, so no server outlives its tests).
 *
 *   node     test/support/env-servers/starlab-protocol-server.ts (a built-in env over the StarLab
 *            protocol, with the faults of faults.ts)
 *   python   examples/environments/guess_number_server.py (StarLab protocol, standard library)
 *   openenv  examples/environments/openenv_server.py (OpenEnv's WebSocket sessions, /ws)
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitForPort } from '../servers';
import type { FaultKind, RequestKind } from './faults';
import { TYPESCRIPT_LOADER as REGISTER } from '../../../src/repositories/typescript-child';

const ROOT = join(__dirname, '..', '..', '..');
const START_TIMEOUT_MS = 30_000;

export type EnvServerKind = 'node' | 'python' | 'openenv';

/**
 * The Python that runs the examples: STARLAB_PYTHON, else the distribution's (where
 * scripts/ensure-python-env.sh installs python3-websockets), else whatever `python3` is.
 */
export const PYTHON = process.env.STARLAB_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

export interface EnvServerOptions {
  /** Extra command-line flags, e.g. ['--env', 'bandit'] (node) or ['--max', '7'] (python, openenv). */
  args?: readonly string[];
  /** The node server's fault (faults.ts), passed as flags. */
  fault?: { kind: FaultKind; on?: readonly RequestKind[]; after?: number; count?: number };
  /** Port to listen on (default: one the OS picks). */
  port?: number;
  /** Extra environment variables of the process (the node server reads its fault from STARLAB_ENV_FAULT…). */
  env?: Readonly<Record<string, string>>;
}

export interface EnvServer {
  kind: EnvServerKind;
  /** What to register: http://127.0.0.1:PORT, or ws://127.0.0.1:PORT/ws for openenv. */
  url: string;
  /** http://127.0.0.1:PORT whatever the kind (openenv's /health and /schema). */
  base: string;
  port: number;
  /** The server's stdout and stderr so far (last 20 kB). */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) once the process has ended. */
  exited: Promise<number | null>;
  /** Kills the server (SIGKILL by default) and waits for it to end. Idempotent. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stops it and starts another on the same port, with other options (a redeployed server). */
  restart(options?: Omit<EnvServerOptions, 'port'>): Promise<void>;
}

function command(kind: EnvServerKind, options: EnvServerOptions): string[] {
  const port = String(options.port ?? 0);
  const args = options.args ?? [];
  if (kind === 'python') return [PYTHON, join(ROOT, 'examples', 'environments', 'guess_number_server.py'), '--port', port, ...args];
  if (kind === 'openenv') return [PYTHON, join(ROOT, 'examples', 'environments', 'openenv_server.py'), '--port', port, ...args];
  const fault = options.fault;
  const faultArgs = fault
    ? ['--fault', fault.kind, ...(fault.on ? ['--fault-on', fault.on.join(',')] : []), ...(fault.after !== undefined ? ['--fault-after', String(fault.after)] : []), ...(fault.count !== undefined ? ['--fault-count', String(fault.count)] : [])]
    : [];
  return [process.execPath, '-r', REGISTER, join(__dirname, 'starlab-protocol-server.ts'), '--port', port, ...faultArgs, ...args];
}

/** Kills `pid` once this process has gone, however it ended; kill() the watchdog to cancel. */
function watchdog(pid: number): ChildProcess {
  const child = spawn('/bin/sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${pid} 2>/dev/null`], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

interface Running {
  child: ChildProcess;
  guard: ChildProcess;
  exited: Promise<number | null>;
  url: string;
}

async function launch(kind: EnvServerKind, options: EnvServerOptions, log: (chunk: string) => void): Promise<Running> {
  const [program, ...args] = command(kind, options);
  const child = spawn(program, args, { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = watchdog(child.pid!);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (guard.kill(), resolve(code))));
  let stdout = '';
  child.stderr!.on('data', (chunk) => log(String(chunk)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      log(String(chunk));
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    exited.then((code) => reject(new Error(`${kind} environment server exited (${code}) before it listened`)));
    setTimeout(() => reject(new Error(`${kind} environment server did not listen within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS).unref();
  });
  try {
    const url = await listening;
    await waitForPort(Number(new URL(url).port));
    return { child, guard, exited, url };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
}

export async function startEnvServer(kind: EnvServerKind, options: EnvServerOptions = {}): Promise<EnvServer> {
  let output = '';
  const log = (chunk: string) => (output = (output + chunk).slice(-20_000));
  let running = await launch(kind, options, log);
  const server: EnvServer = {
    kind,
    url: running.url,
    port: Number(new URL(running.url).port),
    base: `http://127.0.0.1:${new URL(running.url).port}`,
    output: () => output,
    exited: running.exited,
    async stop(signal = 'SIGKILL') {
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill(signal);
      await running.exited;
    },
    async restart(next = {}) {
      await server.stop();
      await waitForPort(server.port, { accepting: false });
      running = await launch(kind, { ...next, port: server.port }, log);
      server.exited = running.exited;
    },
  };
  return server;
}

/** Replaces the fault of a running node server (its POST /__faults): a healthy server turns bad mid-job, or recovers. */
export async function setFault(server: EnvServer, fault: NonNullable<EnvServerOptions['fault']> | { kind: 'none' }): Promise<void> {
  const response = await fetch(`${server.base}/__faults`, { method: 'POST', body: JSON.stringify(fault) });
  if (!response.ok) throw new Error(`setting the fault failed: ${response.status} ${await response.text()}`);
}

/** How many faulty answers a node server gave under its current fault. */
export async function faultHits(server: EnvServer): Promise<number> {
  const response = await fetch(`${server.base}/__faults`);
  return ((await response.json()) as { hits: number }).hits;
}

/**
 * The test server as a plain handle: a built-in environment over the protocol, turned bad at once
 * with one-word modes (faults.ts MODES), its request counts read back.
 */
export interface ProtocolServer {
  url: string;
  setMode(mode: string): Promise<void>;
  counts(): Promise<Record<string, number>>;
  /** Kills the process (SIGKILL: a server that dies mid-job). */
  stop(): Promise<void>;
}

export async function startProtocolServer(options: { env?: string; config?: Record<string, unknown>; fork?: boolean } = {}): Promise<ProtocolServer> {
  const args = ['--env', options.env ?? 'frozenlake', '--config', JSON.stringify(options.config ?? {}), ...(options.fork === false ? ['--no-fork'] : [])];
  const server = await startEnvServer('node', { args });
  const control = async (path: string, body: unknown = {}) => {
    const response = await fetch(`${server.base}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path} failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, number>;
  };
  return { url: server.url, setMode: async (mode) => void (await control('/__mode', { mode })), counts: () => control('/__counts'), stop: () => server.stop() };
}

/**
 * A built-in environment (FrozenLake by default) served over the StarLab protocol from a process
 * of its own, for the client's tests, the parity test and bench/env-overhead.ts. `POST /__mode
 * {"mode": …}` turns it bad at once: `503` (every request), `hang` (no answer), `garbage` (not
 * JSON), `missing` (no observation), `foreign` (an action outside the set), `oversize` (an
 * observation over the bound), `thousands` (a manifest of 5000 actions); `ok` heals it.
 *
 *   node -r ./scripts/register.js test/support/protocol-server.ts [--env frozenlake] [--config '{}'] [--no-fork]
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getEnvDefinition } from '../../src/training/envs/registry';
import type { SyncEnv } from '../../src/training/envs/types';
import { TYPESCRIPT_LOADER as REGISTER } from '../../src/repositories/typescript-child';

export type ServerMode = 'ok' | '503' | 'hang' | 'garbage' | 'missing' | 'foreign' | 'oversize' | 'thousands';

function serve(envId: string, config: Record<string, unknown>, fork: boolean): void {
  const definition = getEnvDefinition(envId);
  const sessions = new Map<string, SyncEnv>();
  let next = 0;
  let mode: ServerMode = 'ok';
  const counts: Record<string, number> = {};
  const open = (env: SyncEnv) => {
    const id = `s${next++}`;
    sessions.set(id, env);
    return id;
  };
  const answers: Record<string, (body: Record<string, unknown>) => unknown> = {
    '/manifest': () => ({
      actions: mode === 'thousands' ? Array.from({ length: 5000 }, (_, i) => `a${i}`) : definition.actionNames,
      ...(definition.rolloutDefaults?.maxTurns ? { maxTurns: definition.rolloutDefaults.maxTurns } : {}),
      // A newline is a token of every vocabulary already, and the protocol's words have no whitespace.
      vocabulary: definition.vocabulary(config).filter((word) => word.trim() !== ''),
      expert: definition.expert !== undefined,
      description: definition.description,
    }),
    '/reset': (body) => {
      const env = definition.create(config);
      const observation = env.reset(body.seed as number);
      return { session: open(env), observation };
    },
    '/step': (body) => {
      const env = sessions.get(body.session as string);
      if (!env) return { status: 404 };
      const result = env.step(body.action as string);
      if (mode === 'missing') return { reward: result.reward, done: result.done };
      if (mode === 'foreign') return { observation: result.observation, reward: result.reward, done: result.done, actions: ['Fly'] };
      if (mode === 'oversize') return { observation: 'X'.repeat(20_000), reward: result.reward, done: result.done };
      return { observation: result.observation, reward: result.reward, done: result.done, success: result.info.success };
    },
    '/expert': (body) => ({ actions: definition.expert!(sessions.get(body.session as string)!) }),
    '/fork': (body) => (fork ? { session: open(sessions.get(body.session as string)!.clone()) } : { status: 404 }),
    '/close': (body) => {
      sessions.delete(body.session as string);
      return {};
    },
    '/__mode': (body) => {
      mode = body.mode as ServerMode;
      return { mode };
    },
    '/__counts': () => ({ ...counts, open: sessions.size }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      counts[path] = (counts[path] ?? 0) + 1;
      const control = path.startsWith('/__');
      if (!control && mode === 'hang') return;
      if (!control && mode === '503') return response.writeHead(503).end('down for maintenance');
      if (!control && mode === 'garbage') return response.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>');
      const answer = answers[path];
      if (!answer) return response.writeHead(404).end();
      const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      const result = answer(body) as { status?: number };
      if (result.status) return response.writeHead(result.status).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    console.log(`listening on http://127.0.0.1:${address.port}`);
  });
}

export interface ProtocolServer {
  url: string;
  setMode(mode: ServerMode): Promise<void>;
  counts(): Promise<Record<string, number>>;
  /** Kills the process (SIGKILL: a server that dies mid-job). */
  stop(): Promise<void>;
}

/** Starts the server in a child process and resolves once it listens. */
export function startProtocolServer(options: { env?: string; config?: Record<string, unknown>; fork?: boolean } = {}): Promise<ProtocolServer> {
  const args = ['-r', REGISTER, __filename, '--env', options.env ?? 'frozenlake', '--config', JSON.stringify(options.config ?? {}), ...(options.fork === false ? ['--no-fork'] : [])];
  // stdin is a pipe the server watches: when this process ends, however it ends, the server does too.
  const child: ChildProcess = spawn(process.execPath, args, { cwd: join(__dirname, '..', '..'), stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`protocol server exited with ${code}`)));
    child.stdout!.once('data', (data: Buffer) => {
      const url = /listening on (\S+)/.exec(data.toString())![1];
      const control = async (path: string, body?: unknown) => (await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body ?? {}) })).json() as Promise<Record<string, number>>;
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      resolve({
        url,
        setMode: async (mode) => void (await control('/__mode', { mode })),
        counts: () => control('/__counts'),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    });
  });
}

if (require.main === module) {
  const { values } = parseArgs({ options: { env: { type: 'string', default: 'frozenlake' }, config: { type: 'string', default: '{}' }, 'no-fork': { type: 'boolean', default: false } } });
  serve(values.env!, JSON.parse(values.config!) as Record<string, unknown>, !values['no-fork']);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

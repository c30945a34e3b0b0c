/**
 * A StarLab-protocol environment server (docs/environment-protocol.yaml) that serves a built-in
 * environment (FrozenLake by default) from src/training/envs, for the parity test (the same game
 * over the protocol and in-process) and, with a fault (faults.ts), for the failure tests. Run as
 * its own process, as startEnvServer('node', …) does:
 *
 *   node -r ./scripts/register.js test/support/env-servers/starlab-protocol-server.ts \
 *     [--env frozenlake] [--config '{"slippery":false}'] [--port 0] [--no-fork] [--no-expert]
 *     [--fault unavailable --fault-on reset,step --fault-after 3 --fault-count 2]
 *
 * The fault flags may come from STARLAB_ENV_FAULT, STARLAB_ENV_FAULT_ON, STARLAB_ENV_FAULT_AFTER
 * and STARLAB_ENV_FAULT_COUNT instead. `POST /__faults {kind, on?, after?, count?}` replaces the
 * fault of a running server (a test turns a healthy server bad mid-job) and `GET /__faults` says
 * how many faulty answers it gave; `POST /__mode {"mode"}` sets one of the one-word MODES of
 * faults.ts, and `POST /__counts` says how many requests of each path it served and how many
 * sessions are open. The first line on stdout is `listening on <url>`.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { getEnvDefinition } from '../../../src/training/envs/registry';
import { REMOTE_BOUNDS } from '../../../src/training/envs/remote-bounds';
import type { Env, EnvDefinition } from '../../../src/training/envs/types';
import { FaultSchedule, MODES, corrupt, faultOptions, type RequestKind } from './faults';

const MAX_SESSIONS = 10_000;
const MAX_BODY_BYTES = 64 * 1024;

class Problem extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly field?: string,
  ) {
    super(detail);
  }
}

interface Options {
  definition: EnvDefinition;
  config: Record<string, unknown>;
  fork: boolean;
  expert: boolean;
}

/** The protocol's answers over live episodes of one built-in environment. */
class Episodes {
  private readonly sessions = new Map<string, Env>();
  private next = 0;

  get openSessions(): number {
    return this.sessions.size;
  }

  constructor(private readonly options: Options) {}

  manifest(): Record<string, unknown> {
    const { definition, config } = this.options;
    const maxTurns = definition.rolloutDefaults?.maxTurns;
    return {
      actions: [...definition.actionNames],
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      vocabulary: [...definition.vocabulary({ ...definition.defaults, ...config })],
      expert: this.options.expert && definition.expert !== undefined,
      description: definition.description,
    };
  }

  async reset(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const seed = body.seed;
    if (!Number.isInteger(seed) || (seed as number) < 0 || (seed as number) > REMOTE_BOUNDS.maxSeed) throw new Problem(400, `'seed' must be an integer from 0 to ${REMOTE_BOUNDS.maxSeed}`, 'seed');
    const env = this.options.definition.create({ ...this.options.definition.defaults, ...this.options.config });
    const observation = await env.reset(seed as number);
    return { session: this.open(env), observation };
  }

  async step(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const env = this.get(body.session);
    if (typeof body.action !== 'string') throw new Problem(400, "'action' must be a string", 'action');
    if (env.done) throw new Problem(409, 'the episode is over; reset for another', 'session');
    const result = await env.step(body.action);
    if (!result.info.actionValid) throw new Problem(400, `'action' must be one of ${this.options.definition.actionNames.join(', ')}`, 'action');
    return { observation: result.observation, reward: result.reward, done: result.done, success: result.info.success };
  }

  async expert(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const expert = this.options.expert ? this.options.definition.expert : undefined;
    if (!expert) throw new Problem(404, 'this server has no expert (its manifest says "expert": false)');
    return { actions: await expert(this.get(body.session)) };
  }

  async fork(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.options.fork) throw new Problem(404, 'this server does not offer fork');
    return { session: this.open(await this.get(body.session).clone()) };
  }

  close(body: Record<string, unknown>): void {
    if (typeof body.session !== 'string') throw new Problem(400, "'session' must be a string", 'session');
    this.sessions.delete(body.session);
  }

  private open(env: Env): string {
    const session = `s${++this.next}`;
    this.sessions.set(session, env);
    // Oldest first: a client that never closes cannot grow the map without bound.
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return session;
  }

  private get(session: unknown): Env {
    if (typeof session !== 'string') throw new Problem(400, "'session' must be a string", 'session');
    const env = this.sessions.get(session);
    if (!env) throw new Problem(404, `no session '${session.slice(0, 64)}' (never opened, closed, or expired)`, 'session');
    return env;
  }
}

const ROUTES: Readonly<Record<string, RequestKind>> = {
  'GET /manifest': 'manifest',
  'POST /reset': 'reset',
  'POST /step': 'step',
  'POST /expert': 'expert',
  'POST /fork': 'fork',
  'POST /close': 'close',
};

function send(response: ServerResponse, status: number, body: unknown, type = status < 400 ? 'application/json' : 'application/problem+json'): void {
  const data = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(data), ...(status === 503 ? { 'Retry-After': '0' } : {}) });
  response.end(data);
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Problem(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  } catch {
    throw new Problem(400, 'the body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Problem(400, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Starts the server; resolves with its URL once it listens. */
export async function serve(options: Options, port: number, initialFault: FaultSchedule): Promise<string> {
  const episodes = new Episodes(options);
  let faults = initialFault;
  const counts: Record<string, number> = {};
  const handlers: Record<RequestKind, (body: Record<string, unknown>) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined> = {
    manifest: () => episodes.manifest(),
    reset: (body) => episodes.reset(body),
    step: (body) => episodes.step(body),
    expert: (body) => episodes.expert(body),
    fork: (body) => episodes.fork(body),
    close: (body) => (episodes.close(body), undefined),
  };
  const server = createServer(async (request, response) => {
    try {
      const route = `${request.method} ${request.url}`;
      if (!request.url?.startsWith('/__')) counts[request.url ?? '/'] = (counts[request.url ?? '/'] ?? 0) + 1;
      if (route === 'POST /__counts') return send(response, 200, { ...counts, open: episodes.openSessions });
      if (route === 'POST /__mode') {
        const mode = MODES[String((await readJson(request)).mode)];
        if (!mode) throw new Problem(400, `'mode' must be one of ${Object.keys(MODES).join(', ')}`, 'mode');
        faults = new FaultSchedule(faultOptions(mode));
        return send(response, 200, { ...faults.options, count: String(faults.options.count) });
      }
      if (route === 'GET /__faults') return send(response, 200, { ...faults.options, count: String(faults.options.count), hits: faults.hits });
      if (route === 'POST /__faults') {
        faults = new FaultSchedule(faultOptions((await readJson(request)) as Parameters<typeof faultOptions>[0]));
        return send(response, 200, { ...faults.options, count: String(faults.options.count) });
      }
      const kind = ROUTES[route];
      if (!kind) throw new Problem(404, `no ${route}`);
      const body = request.method === 'POST' ? await readJson(request) : {};
      if (faults.strikes(kind)) {
        const fault = faults.options.kind;
        if (fault === 'die') process.exit(3);
        if (fault === 'hang') return; // never answered; the socket stays open
        if (fault === 'unavailable') return send(response, 503, { title: 'Service Unavailable', status: 503, detail: 'injected fault' }, 'application/problem+json');
        if (fault === 'garbage') return send(response, 200, '<html>502 Bad Gateway</html', 'application/json');
        const answer = await handlers[kind](body);
        return send(response, 200, corrupt(fault, kind, answer ?? {}));
      }
      const answer = await handlers[kind](body);
      return answer === undefined ? send(response, 204, undefined) : send(response, 200, answer);
    } catch (error) {
      if (!(error instanceof Problem)) return send(response, 500, { title: 'Internal Server Error', status: 500, detail: String(error) });
      send(response, error.status, { title: STATUS_CODES[error.status], status: error.status, detail: error.message, ...(error.field ? { errors: [{ field: error.field, message: error.message }] } : {}) });
    }
  });
  // Longer than clients keep an idle connection, so the server never closes one a client is about to reuse.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function main(): Promise<void> {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      env: { type: 'string', default: 'frozenlake' },
      config: { type: 'string', default: '{}' },
      port: { type: 'string', default: '0' },
      'no-fork': { type: 'boolean', default: false },
      'no-expert': { type: 'boolean', default: false },
      fault: { type: 'string', default: env.STARLAB_ENV_FAULT },
      'fault-on': { type: 'string', default: env.STARLAB_ENV_FAULT_ON },
      'fault-after': { type: 'string', default: env.STARLAB_ENV_FAULT_AFTER },
      'fault-count': { type: 'string', default: env.STARLAB_ENV_FAULT_COUNT },
    },
  });
  const definition = getEnvDefinition(values.env!);
  if (definition.actionsFor) throw new Error(`${definition.id}: actions that take an argument are not served by this test server`);
  const fault = faultOptions({
    kind: values.fault,
    on: values['fault-on'],
    after: values['fault-after'] === undefined ? undefined : Number(values['fault-after']),
    count: values['fault-count'] === undefined ? undefined : Number(values['fault-count']),
  });
  const options = { definition, config: JSON.parse(values.config!) as Record<string, unknown>, fork: !values['no-fork'], expert: !values['no-expert'] };
  const url = await serve(options, Number(values.port), new FaultSchedule(fault));
  console.log(`listening on ${url}`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

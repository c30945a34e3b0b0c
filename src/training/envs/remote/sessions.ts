import { EnvServerError, Manifest, ResetAnswer, StepAnswer, readExpert, readFork, readManifest, readOpenEnvObservation, readReset, readStep } from './protocol';

/**
 * One JSON request to an environment server. Timeouts, retries with backoff and kept-alive
 * connections are the transport's (src/repositories/env-http-transport.ts); it resolves to the
 * parsed body of a 2xx answer and otherwise throws an `EnvServerError` that names `label`.
 */
export interface EnvTransport {
  request(method: 'GET' | 'POST', path: string, body: unknown, label: string, options?: { retries?: number }): Promise<unknown>;
  dispose(): void;
}

/** A server's episodes, whatever the dialect: the calls a `RemoteEnv` makes. */
export interface RemoteSessions {
  readonly environment: string;
  readonly manifest: Manifest;
  reset(seed: number): Promise<ResetAnswer>;
  step(session: string, action: string): Promise<StepAnswer>;
  expert(session: string): Promise<string[]>;
  fork(session: string): Promise<string>;
  /** Best effort: a failure is ignored (the server forgets idle sessions itself). */
  close(session: string): Promise<void>;
  dispose(): void;
}

/** The StarLab protocol (docs/environments.md): one HTTP request per call, one session per episode. */
export class StarLabSessions implements RemoteSessions {
  private constructor(
    readonly environment: string,
    readonly manifest: Manifest,
    private readonly transport: EnvTransport,
  ) {}

  /** Reads and checks the server's manifest. */
  static async connect(environment: string, transport: EnvTransport): Promise<StarLabSessions> {
    const manifest = readManifest(environment, await transport.request('GET', '/manifest', undefined, 'GET /manifest'));
    return new StarLabSessions(environment, manifest, transport);
  }

  async reset(seed: number): Promise<ResetAnswer> {
    return readReset(this.environment, this.manifest, await this.transport.request('POST', '/reset', { seed }, `POST /reset (seed ${seed})`), seed);
  }

  async step(session: string, action: string): Promise<StepAnswer> {
    return readStep(this.environment, this.manifest, await this.transport.request('POST', '/step', { session, action }, `POST /step (action ${action})`), action);
  }

  async expert(session: string): Promise<string[]> {
    if (!this.manifest.expert) throw new EnvServerError(this.environment, 'POST /expert', 'malformed', 'the manifest offers no expert');
    return readExpert(this.environment, this.manifest, await this.transport.request('POST', '/expert', { session }, 'POST /expert'));
  }

  async fork(session: string): Promise<string> {
    return readFork(this.environment, await this.transport.request('POST', '/fork', { session }, 'POST /fork'));
  }

  async close(session: string): Promise<void> {
    try {
      await this.transport.request('POST', '/close', { session }, 'POST /close', { retries: 0 });
    } catch {
      // Best effort by the protocol: a server that cannot close a session costs it memory, not the job its run.
    }
  }

  dispose(): void {
    this.transport.dispose();
  }
}

/** How an OpenEnv server's observations and actions map onto text (given at registration). */
export interface OpenEnvMapping {
  /** Field of the observation object that holds its text. */
  observationField: string;
  /** Field of the action object that carries the action word. */
  actionField: string;
  /** The action set (OpenEnv has no manifest). */
  actions: string[];
  vocabulary?: string[];
  maxTurns?: number;
  description?: string;
}

/** One WebSocket session: `exchange` sends a message and resolves to the server's next message. */
export interface SocketSession {
  exchange(message: unknown, label: string): Promise<unknown>;
  /** Sends `message` (if any) without waiting for an answer, then closes the connection. */
  end(message?: unknown): void;
}

export type SocketOpener = (label: string) => Promise<SocketSession>;

/**
 * OpenEnv's WebSocket sessions (`/ws`): a connection is an episode; `reset` and `step` messages
 * are answered by `{"type": "observation", "data": {"observation": {…}, "reward", "done"}}` or
 * `{"type": "error", "data": {"message"}}`. No expert and no fork.
 */
export class OpenEnvSessions implements RemoteSessions {
  readonly manifest: Manifest;
  private readonly sockets = new Map<string, SocketSession>();
  private nextSession = 0;

  constructor(
    readonly environment: string,
    private readonly mapping: OpenEnvMapping,
    private readonly open: SocketOpener,
  ) {
    this.manifest = readManifest(environment, { actions: mapping.actions, vocabulary: mapping.vocabulary, maxTurns: mapping.maxTurns, description: mapping.description });
  }

  async reset(seed: number): Promise<ResetAnswer> {
    const label = `reset (seed ${seed})`;
    const socket = await this.open(label);
    try {
      const answer = this.observation(await socket.exchange({ type: 'reset', data: { seed } }, label), label);
      const session = String(this.nextSession++);
      this.sockets.set(session, socket);
      return { session, observation: answer.observation };
    } catch (error) {
      socket.end();
      throw error;
    }
  }

  async step(session: string, action: string): Promise<StepAnswer> {
    const label = `step (action ${action})`;
    return this.observation(await this.socket(session, label).exchange({ type: 'step', data: { [this.mapping.actionField]: action } }, label), label);
  }

  expert(): Promise<string[]> {
    return Promise.reject(new EnvServerError(this.environment, 'expert', 'malformed', 'an OpenEnv server has no expert'));
  }

  fork(): Promise<string> {
    return Promise.reject(new EnvServerError(this.environment, 'fork', 'malformed', 'an OpenEnv server cannot copy an episode'));
  }

  async close(session: string): Promise<void> {
    this.sockets.get(session)?.end({ type: 'close' });
    this.sockets.delete(session);
  }

  dispose(): void {
    for (const socket of this.sockets.values()) socket.end();
    this.sockets.clear();
  }

  private socket(session: string, label: string): SocketSession {
    const socket = this.sockets.get(session);
    if (!socket) throw new EnvServerError(this.environment, label, 'malformed', `no open session ${session}`);
    return socket;
  }

  private observation(message: unknown, label: string): StepAnswer {
    return readOpenEnvObservation(this.environment, label, message, this.mapping.observationField);
  }
}

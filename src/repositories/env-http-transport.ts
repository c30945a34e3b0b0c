import * as http from 'node:http';
import * as https from 'node:https';
import { EnvServerError, PROTOCOL_LIMITS } from '../training/envs/remote/protocol';
import type { EnvTransport } from '../training/envs/remote/sessions';

/** How patient StarLab is with an environment server. */
export interface EnvHttpOptions {
  /** Per request, from sending to the whole answer read. */
  timeoutMs: number;
  /** Further tries after a timeout, a refused or reset connection or a 5xx answer. */
  retries: number;
  /** Wait before the first retry; doubled for each next one. */
  backoffMs: number;
  /** Connections kept open to the server: a turn's requests for every live episode go out together on them. */
  maxSockets: number;
}

export const ENV_HTTP_DEFAULTS: EnvHttpOptions = { timeoutMs: 10_000, retries: 3, backoffMs: 200, maxSockets: 256 };

/** Raised inside one try; `retryable` says whether another try may help. */
class TryFailed extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The StarLab protocol's requests over HTTP/1.1 with kept-alive connections (the one place that
 * opens them, docs/layers.md): a timeout per request, bounded retries with exponential backoff on
 * what may pass (timeouts, refused or reset connections, 5xx), and none on what will not (4xx, a
 * body that is not JSON or is over the size bound). Every failure is an `EnvServerError` naming the
 * environment and the request.
 */
export class EnvHttpTransport implements EnvTransport {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly options: EnvHttpOptions;
  /** Each path's URL, parsed once: a rollout sends hundreds of requests to the same few. */
  private readonly targets = new Map<string, URL>();

  constructor(
    private readonly environment: string,
    url: string,
    options: Partial<EnvHttpOptions> = {},
  ) {
    this.base = new URL(url.endsWith('/') ? url : `${url}/`);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new Error(`environment '${environment}': the URL must be http:// or https://, got ${url}`);
    this.options = { ...ENV_HTTP_DEFAULTS, ...options };
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent;
    // No Nagle delay: a request is one small write, and its answer is awaited before the next.
    this.agent = new Agent({ keepAlive: true, maxSockets: this.options.maxSockets, noDelay: true });
  }

  async request(method: 'GET' | 'POST', path: string, body: unknown, label: string, options: { retries?: number } = {}): Promise<unknown> {
    const retries = options.retries ?? this.options.retries;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(method, path, payload);
      } catch (error) {
        const failed = error as TryFailed;
        if (!failed.retryable) throw new EnvServerError(this.environment, label, 'malformed', failed.message, failed.status);
        if (attempt >= retries) {
          const tries = attempt + 1;
          throw new EnvServerError(this.environment, label, 'unavailable', `${failed.message} (${tries} ${tries === 1 ? 'try' : 'tries'})`, failed.status);
        }
        await new Promise((resolve) => setTimeout(resolve, this.options.backoffMs * 2 ** attempt));
      }
    }
  }

  dispose(): void {
    this.agent.destroy();
  }

  private once(method: 'GET' | 'POST', path: string, payload: string | undefined): Promise<unknown> {
    const target = this.targets.get(path) ?? this.targets.set(path, new URL(path.replace(/^\//, ''), this.base)).get(path)!;
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      const request = client.request(target, { method, agent: this.agent, headers }, (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > PROTOCOL_LIMITS.body) {
            request.destroy();
            reject(new TryFailed(`the answer is over ${PROTOCOL_LIMITS.body} bytes`, false, status));
          } else chunks.push(chunk);
        });
        response.on('error', (error) => reject(new TryFailed(error.message, true, status)));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 500) return reject(new TryFailed(`HTTP ${status}`, true, status));
          if (status < 200 || status >= 300) return reject(new TryFailed(`HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, false, status));
          try {
            resolve(text.length === 0 ? {} : JSON.parse(text));
          } catch {
            reject(new TryFailed(`the answer is not JSON (${text.length > 60 ? `${text.slice(0, 60)}…` : JSON.stringify(text)})`, false, status));
          }
        });
      });
      request.setTimeout(this.options.timeoutMs, () => request.destroy(new TryFailed(`no answer within ${this.options.timeoutMs} ms`, true)));
      request.on('error', (error: Error & { code?: string }) => reject(error instanceof TryFailed ? error : new TryFailed(error.code ? `${error.code} ${target.host}` : error.message, true)));
      request.end(payload);
    });
  }
}

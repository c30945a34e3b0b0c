/** A problem document (RFC 9457) as the API sends it. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: { field: string; message: string }[];
  [extension: string]: unknown;
}

/** An API answer of 4xx/5xx, with its problem document. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }

  /** Title, detail and every named field, as a person reads them. */
  describe(): string {
    const lines = [`${this.problem.title ?? 'Error'} (${this.status})`];
    if (this.problem.detail) lines.push(`  ${this.problem.detail}`);
    for (const error of this.problem.errors ?? []) lines.push(`  ${error.field}: ${error.message}`);
    return lines.join('\n');
  }
}

export interface JobEvent {
  id: number;
  type: string;
  message: string;
  data: unknown;
  createdAt: string;
}

/** The StarLab HTTP API with one API key (Bearer). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Authorization: `Bearer ${this.key}`, ...extra };
  }

  private async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`cannot reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    if (!response.ok) throw new ApiError(response.status, await problemOf(response));
    return response;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: T }> {
    const response = await this.fetch(path, {
      method,
      headers: this.headers(body === undefined ? headers : { 'Content-Type': 'application/json', ...headers }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : null) as T };
  }

  get<T = unknown>(path: string): Promise<T> {
    return this.request<T>('GET', path).then((r) => r.body);
  }

  post<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body).then((r) => r.body);
  }

  /** A download as a stream, with the file name the server suggests. */
  async download(path: string): Promise<{ body: ReadableStream<Uint8Array>; fileName: string | null; size: number | null }> {
    const response = await this.fetch(path, { headers: this.headers() });
    const fileName = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? null;
    const length = response.headers.get('content-length');
    return { body: response.body!, fileName, size: length === null ? null : Number(length) };
  }

  /**
   * The job's events as they happen (server-sent events), resuming after a dropped connection
   * from the last event id, until the stream ends (the job finished) or `signal` aborts.
   */
  async *follow(jobId: string, signal: AbortSignal, onReconnect: (error: Error) => void = () => {}): AsyncGenerator<JobEvent> {
    let lastEventId = 0;
    let delayMs = 500;
    while (!signal.aborted) {
      try {
        const response = await this.fetch(`/v1/jobs/${jobId}/stream`, { headers: this.headers(lastEventId ? { 'Last-Event-ID': String(lastEventId) } : {}), signal });
        delayMs = 500;
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          const blocks = buffer.split('\n\n');
          buffer = blocks.pop()!;
          for (const block of blocks) {
            const data = block
              .split('\n')
              .filter((line) => line.startsWith('data: '))
              .map((line) => line.slice(6))
              .join('\n');
            if (!data) continue;
            const event = JSON.parse(data) as JobEvent;
            lastEventId = event.id;
            yield event;
          }
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status < 500 && error.status !== 429) throw error;
        onReconnect(error as Error);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = Math.min(delayMs * 2, 10_000);
      }
    }
  }
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text();
  try {
    return JSON.parse(text) as Problem;
  } catch {
    return { title: response.statusText || `HTTP ${response.status}`, detail: text.slice(0, 200) || undefined };
  }
}

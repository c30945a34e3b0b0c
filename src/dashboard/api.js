// The API as the dashboard uses it: the user's key as a Bearer token on every request (kept for
// the browser session, or on this browser when asked), problem+json errors, and the job's event
// stream read with fetch (EventSource cannot send an Authorization header).

const STORAGE_KEY = 'starlab.apiKey';

export class ApiError extends Error {
  /** @param {number} status @param {{title?: string, detail?: string, errors?: {field: string, message: string}[]}} problem */
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function apiKey() {
  return sessionStorage.getItem(STORAGE_KEY) ?? localStorage.getItem(STORAGE_KEY);
}

/** @param {string} key @param {boolean} remember keep it on this browser, not just this tab's session */
export function saveApiKey(key, remember) {
  sessionStorage.setItem(STORAGE_KEY, key);
  if (remember) localStorage.setItem(STORAGE_KEY, key);
  else localStorage.removeItem(STORAGE_KEY);
}

export function forgetApiKey() {
  sessionStorage.removeItem(STORAGE_KEY);
  localStorage.removeItem(STORAGE_KEY);
}

/** Called when the API refuses the key (revoked, expired): the app shows the login view. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

function headers(extra = {}) {
  const key = apiKey();
  return { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...extra };
}

async function failure(response) {
  let problem = {};
  try {
    problem = await response.json();
  } catch {
    problem = { title: response.statusText };
  }
  if (response.status === 401) onUnauthorized();
  return new ApiError(response.status, problem);
}

/** JSON from the API; throws ApiError with the problem document on a 4xx/5xx. */
export async function api(path, { method = 'GET', body, key } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (key) init.headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** Saves a download (a checkpoint) under the name the server gives it. */
export async function download(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await failure(response);
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'download.bin';
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Follows a job's server-sent events, calling `onEvent` for each; reconnects after a dropped
 * connection with Last-Event-ID, so no event is missed or repeated. Resolves when the stream
 * ends normally (the job finished) or `signal` aborts.
 */
export async function followEvents(jobId, onEvent, signal, onStatus = () => {}) {
  let lastEventId = 0;
  let delay = 1000;
  while (!signal.aborted) {
    try {
      const response = await fetch(`/v1/jobs/${jobId}/stream`, { headers: headers(lastEventId ? { 'Last-Event-ID': String(lastEventId) } : {}), signal });
      if (!response.ok) throw await failure(response);
      onStatus('live');
      delay = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          onStatus('ended');
          return;
        }
        buffer += value;
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
          if (!data) continue;
          const event = JSON.parse(data);
          lastEventId = event.id;
          onEvent(event);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) throw error;
      onStatus('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15_000);
    }
  }
}

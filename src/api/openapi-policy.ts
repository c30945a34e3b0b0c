import type { OpenAPIObject } from '@nestjs/swagger';

// The document is walked as plain JSON: its typed form has no room for the fields added here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const problem = (description: string, headers: Json = {}): Json => ({
  description,
  headers,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});
const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** Response headers the HTTP layer sets on many operations, declared once and referenced. */
const HEADERS: Json = {
  'RateLimit-Limit': { description: 'requests this API key may make per window (absent when rate limiting is off)', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'requests left in the current window, this one counted', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'seconds until the current window ends', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { description: 'the limit and its window in seconds, e.g. `120;w=60`', schema: { type: 'string', pattern: '^\\d+;w=\\d+$' } },
  'Retry-After': { description: 'seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 0 } },
  ETag: { description: 'weak validator of the body; send it back as If-None-Match to get a 304 when nothing changed', schema: { type: 'string', pattern: '^(W/)?"[^"]*"$' } },
};
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];
/** Bodies written whole (res.send) get an ETag; streamed ones (SSE, checkpoint bytes) do not. */
const STREAMED = ['text/event-stream', 'application/octet-stream'];

/**
 * What the HTTP layer answers on every operation of a kind, added to the document generated from
 * the controllers so that each operation declares every status and header it can be served with:
 * * any operation: 500 (an internal error, with an error id);
 * * with a request body: 400 (malformed JSON, invalid fields), 413 (over the body limit) and 415
 *   (not JSON), which the body parser answers before any handler runs;
 * * with query parameters: 400 naming the bad parameter;
 * * authenticated: 429 with Retry-After (the per-key rate limit applies to every one), and the
 *   RateLimit-* headers on every response once the key is known (so not on 401);
 * * bodies written whole carry an ETag; a GET whose If-None-Match matches it is answered 304
 *   (except operations marked `x-cacheable: false`, whose body changes on every request).
 */
export function applyHttpPolicy(document: OpenAPIObject): void {
  document.components = { ...document.components, headers: { ...(document.components?.headers ?? {}), ...HEADERS } };
  for (const item of Object.values(document.paths) as Json[]) {
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      const responses: Json = operation.responses;
      const add = (status: string, response: Json) => (responses[status] ??= response);
      const authenticated = (operation.security?.length ?? 0) > 0;
      // Public operations say so, rather than leaving security undefined.
      if (!authenticated) operation.security = [];
      if (operation.requestBody) {
        add('400', problem('malformed JSON, or invalid fields: `errors` names each one'));
        add('413', problem('the body exceeds the configured limit (STARLAB_BODY_LIMIT_BYTES)'));
        add('415', problem('the body is not application/json'));
      }
      if ((operation.parameters ?? []).some((p: Json) => p.in === 'query')) add('400', problem('a query parameter is invalid: `errors` names it'));
      if (authenticated) add('429', problem('over the API key’s rate limit (or a per-user quota): retry after Retry-After seconds', { 'Retry-After': header('Retry-After') }));
      add('500', problem('internal error; `errorId` identifies it in the service log'));
      const cacheable = operation['x-cacheable'] !== false;
      const conditional = cacheable && method === 'get' && hasWholeBody(responses['200']);
      if (conditional) {
        add('304', { description: 'not modified: the If-None-Match ETag still matches' });
        operation.parameters = [...(operation.parameters ?? []), { name: 'If-None-Match', in: 'header', required: false, description: 'an ETag of an earlier answer', schema: { type: 'string' } }];
      }
      for (const [status, response] of Object.entries(responses) as [string, Json][]) {
        const headers: Json = { ...(response.headers ?? {}) };
        if ((cacheable && hasWholeBody(response)) || (status === '304' && conditional)) headers.ETag ??= header('ETag');
        if (authenticated && status !== '401') for (const name of RATE_LIMIT_HEADERS) headers[name] ??= header(name);
        if (Object.keys(headers).length > 0) response.headers = headers;
        else delete response.headers;
      }
    }
  }
}

function hasWholeBody(response: Json | undefined): boolean {
  const types = Object.keys(response?.content ?? {});
  return types.length > 0 && types.every((type) => !STREAMED.includes(type));
}

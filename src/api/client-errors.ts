import type { Duplex } from 'node:stream';
import { IDEMPOTENCY_KEY_MAX } from '../contracts/jobs.dto';
import type { Problem } from './problem.filter';

/** What Node's HTTP parser reports on a request it refuses before any handler runs. */
interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/**
 * Requests Node's HTTP parser refuses before the application sees them (a header over its size
 * limit, a control byte in a header) would get a bare 400 or 431 and a reset connection. They get
 * a problem document instead, naming the header from the raw bytes: an Idempotency-Key that is
 * too long or malformed is a 400 on `header.Idempotency-Key`, like one the application checks.
 * The connection is closed after the answer (the parser cannot go on).
 */
export function answerClientError(error: ParserError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const problem = problemOf(error);
  const body = JSON.stringify(problem);
  socket.end(`HTTP/1.1 ${problem.status} ${problem.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function problemOf(error: ParserError): Problem {
  const lines = (error.rawPacket?.toString('latin1') ?? '').split('\r\n');
  const instance = /^[A-Z]+ (\S+)/.exec(lines[0] ?? '')?.[1];
  const headers = lines.slice(1).filter((line) => line !== '');
  const invalid = (name: string, message: string): Problem => ({
    type: 'https://starlab.dev/problems/invalid-request',
    title: 'Invalid request',
    status: 400,
    detail: `header.${name}: ${message}`,
    ...(instance ? { instance } : {}),
    errors: [{ field: `header.${name}`, message }],
  });
  const idempotencyKey = `must be 1–${IDEMPOTENCY_KEY_MAX} visible ASCII characters`;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const longest = headers.reduce((a, b) => (b.length > a.length ? b : a), '');
    const name = nameOf(longest);
    if (name?.toLowerCase() === 'idempotency-key') return invalid('Idempotency-Key', idempotencyKey);
    return { type: 'https://starlab.dev/problems/request-header-fields-too-large', title: 'Request header fields too large', status: 431, detail: `the request's headers exceed the server's limit${name ? ` (the largest is ${name})` : ''}`, ...(instance ? { instance } : {}) };
  }
  const bad = headers.find(hasControlCharacter);
  const name = bad ? nameOf(bad) : null;
  if (name?.toLowerCase() === 'idempotency-key') return invalid('Idempotency-Key', idempotencyKey);
  if (name) return invalid(name, 'contains a control character');
  return { type: 'https://starlab.dev/problems/malformed-request', title: 'Malformed request', status: 400, detail: 'the request is not valid HTTP/1.1', ...(instance ? { instance } : {}) };
}

/** A control character other than tab: never valid in a header line. */
function hasControlCharacter(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/** The name of a header line, when it has a plausible one. */
function nameOf(line: string): string | null {
  const name = line.slice(0, line.indexOf(':'));
  return /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(name) ? name : null;
}

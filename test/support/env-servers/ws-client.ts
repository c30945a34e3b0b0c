/**
 * A minimal WebSocket client (RFC 6455: the upgrade handshake, masked text frames out, unmasked
 * frames in, ping answered, close) over node:http, for tests that talk to the OpenEnv-style server
 * without a WebSocket package: Node 20 has no WebSocket without a flag. Text messages only, each
 * in one frame, which is what the OpenEnv messages are.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';

const OPCODE = { text: 0x1, close: 0x8, ping: 0x9, pong: 0xa } as const;

function frame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length]) : length < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]) : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), bigEndian64(length)]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]));
  return Buffer.concat([header, mask, masked]);
}

function bigEndian64(n: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64BE(BigInt(n));
  return buffer;
}

export class WsClient {
  private buffered = Buffer.alloc(0);
  private readonly messages: string[] = [];
  private readonly waiting: ((message: string | null) => void)[] = [];
  /** The close frame's code once the server closed (1006 when the socket ended without one). */
  closeCode: number | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.closed(1006));
    socket.on('error', () => this.closed(1006));
  }

  /** Connects to ws://host:port/path. */
  static connect(url: string, timeoutMs = 5000): Promise<WsClient> {
    const { hostname, port, pathname } = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request({ host: hostname, port, path: pathname, headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64') }, timeout: timeoutMs });
      req.on('upgrade', (_response, socket) => resolve(new WsClient(socket)));
      req.on('response', (response) => reject(new Error(`no WebSocket upgrade: HTTP ${response.statusCode}`)));
      req.on('timeout', () => req.destroy(new Error(`no WebSocket upgrade within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  send(message: string): void {
    this.socket.write(frame(OPCODE.text, Buffer.from(message, 'utf8')));
  }

  /** The next text message; null once the connection closed. */
  next(timeoutMs = 5000): Promise<string | null> {
    const ready = this.messages.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.closeCode !== null) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no WebSocket message within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push((message) => (clearTimeout(timer), resolve(message)));
    });
  }

  /** Sends a JSON message and parses the answer. */
  async call(message: unknown): Promise<any> {
    this.send(JSON.stringify(message));
    const answer = await this.next();
    return answer === null ? null : JSON.parse(answer);
  }

  close(): void {
    if (this.closeCode === null) this.socket.write(frame(OPCODE.close, Buffer.from([0x03, 0xe8])));
    this.socket.end();
  }

  private receive(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.buffered.length < 2) return;
      const opcode = this.buffered[0] & 0x0f;
      let length = this.buffered[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffered.length < 4) return;
        length = this.buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffered.length < 10) return;
        length = Number(this.buffered.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffered.length < offset + length) return;
      const payload = this.buffered.subarray(offset, offset + length);
      this.buffered = this.buffered.subarray(offset + length);
      if (opcode === OPCODE.text) this.deliver(payload.toString('utf8'));
      else if (opcode === OPCODE.ping) this.socket.write(frame(OPCODE.pong, payload));
      else if (opcode === OPCODE.close) this.closed(payload.length >= 2 ? payload.readUInt16BE(0) : 1005);
    }
  }

  private deliver(message: string): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(message);
    else this.messages.push(message);
  }

  private closed(code: number): void {
    if (this.closeCode !== null) return;
    this.closeCode = code;
    for (const waiter of this.waiting.splice(0)) waiter(null);
  }
}

import { createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a Postgres server that can lose the answer to a COMMIT: armed, it
 * forwards everything until the server's CommandComplete for COMMIT, then cuts the connection
 * instead of passing that message on. The transaction is committed; the client sees a broken
 * connection and cannot tell. Armed for another command tag (`UPDATE`: a write that is one
 * statement, committed on its own), it loses that answer instead. Plain (non-TLS) connections
 * only, which is what tests use.
 */
export class CommitReplyDropper {
  /** COMMIT answers dropped so far. */
  dropped = 0;
  private armed = 0;
  private tag = 'COMMIT';
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<CommitReplyDropper> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new CommitReplyDropper(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.relay(client, target));
    return proxy;
  }

  /** Drops the answers of the next `times` COMMITs (or commands with this tag). */
  arm(times = 1, tag = 'COMMIT'): void {
    this.armed = times;
    this.tag = tag;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private relay(client: Socket, target: { host: string; port: number }): void {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => upstream.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    // Server messages after startup: a type byte, then a 4-byte length that counts itself.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) break;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (this.armed > 0 && message[0] === 0x43 /* 'C' */ && message.subarray(5).toString('latin1').startsWith(this.tag)) {
          this.armed--;
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(message);
      }
    });
  }
}

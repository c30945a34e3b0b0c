import WebSocket from 'ws';
import { EnvServerError, PROTOCOL_LIMITS } from '../training/envs/remote/protocol';
import type { SocketOpener, SocketSession } from '../training/envs/remote/sessions';

/**
 * OpenEnv's WebSocket sessions (`URL/ws`), one connection per episode, over the `ws` package
 * (Node 20 has no WebSocket client without a flag): each `exchange` sends one message and waits,
 * at most `timeoutMs`, for the next; a connection that cannot open is retried `retries` times with
 * doubling backoff. Failures are `EnvServerError`s naming the environment and the message.
 */
export function openEnvSocketOpener(environment: string, url: string, options: { timeoutMs?: number; retries?: number; backoffMs?: number } = {}): SocketOpener {
  const { timeoutMs = 10_000, retries = 3, backoffMs = 200 } = options;
  const target = new URL('ws', url.endsWith('/') ? url : `${url}/`);
  target.protocol = target.protocol === 'https:' ? 'wss:' : target.protocol === 'http:' ? 'ws:' : target.protocol;
  return async (label) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await connect(environment, target, timeoutMs);
      } catch (error) {
        if (attempt >= retries) throw new EnvServerError(environment, label, 'unavailable', `${(error as Error).message} (${attempt + 1} tries)`);
        await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** attempt));
      }
    }
  };
}

function connect(environment: string, target: URL, timeoutMs: number): Promise<SocketSession> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(target, { handshakeTimeout: timeoutMs, maxPayload: PROTOCOL_LIMITS.body });
    let waiting: { resolve: (message: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout; request: string } | null = null;
    const fail = (detail: string) => {
      if (waiting) {
        clearTimeout(waiting.timer);
        waiting.reject(new EnvServerError(environment, waiting.request, 'unavailable', detail));
        waiting = null;
      }
    };
    socket.once('open', () => {
      socket.removeAllListeners('error');
      socket.on('error', (error) => fail(error.message));
      socket.on('close', () => fail('the server closed the connection'));
      resolve({
        exchange: (message, request) =>
          new Promise((answer, refuse) => {
            if (socket.readyState !== WebSocket.OPEN) return refuse(new EnvServerError(environment, request, 'unavailable', 'the connection is closed'));
            const timer = setTimeout(() => {
              waiting = null;
              socket.terminate();
              refuse(new EnvServerError(environment, request, 'unavailable', `no answer within ${timeoutMs} ms`));
            }, timeoutMs);
            waiting = { resolve: answer, reject: refuse, timer, request };
            socket.send(JSON.stringify(message));
          }),
        end: (message) => {
          if (message !== undefined && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
          socket.close();
        },
      });
    });
    socket.on('message', (data) => {
      if (!waiting) return;
      const { resolve: answer, reject: refuse, timer, request } = waiting;
      waiting = null;
      clearTimeout(timer);
      try {
        answer(JSON.parse(data.toString()));
      } catch {
        refuse(new EnvServerError(environment, request, 'malformed', 'the message is not JSON'));
      }
    });
    socket.once('error', (error) => reject(error));
  });
}

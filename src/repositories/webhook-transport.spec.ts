import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookTransport } from './webhook-transport';

/** Against a real HTTP server on loopback: what is sent arrives as sent, and what comes back is the status. */
describe('WebhookTransport', () => {
  let server: Server;
  let url: string;
  let received: { method?: string; headers: IncomingMessage['headers']; body: string }[];
  let answer: number | 'never';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ method: req.method, headers: req.headers, body });
        if (answer !== 'never') res.writeHead(answer).end('ignored');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  beforeEach(() => {
    received = [];
    answer = 204;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the body with the given headers and returns the status', async () => {
    const result = await new WebhookTransport().post(url, { headers: { 'content-type': 'application/json', 'webhook-id': 'd1' }, body: '{"a":1}', timeoutMs: 5000 });
    expect(result).toEqual({ status: 204, ok: true });
    expect(received).toEqual([{ method: 'POST', headers: expect.objectContaining({ 'content-type': 'application/json', 'webhook-id': 'd1' }), body: '{"a":1}' }]);
  });

  it('reports a non-2xx answer as an answer, not as a failure', async () => {
    answer = 503;
    expect(await new WebhookTransport().post(url, { headers: {}, body: '', timeoutMs: 5000 })).toEqual({ status: 503, ok: false });
  });

  it('rejects when the endpoint does not answer within the timeout', async () => {
    answer = 'never';
    await expect(new WebhookTransport().post(url, { headers: {}, body: 'x', timeoutMs: 200 })).rejects.toThrow(/timeout|aborted/i);
  });
});

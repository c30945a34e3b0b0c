import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { loadConfig } from '../config/config';
import { RefusedTarget, Resolver, WebhookTransport } from './webhook-transport';

/** A transport with the service's defaults, plus the given allowlist and resolver. */
const transport = (allowed = '', resolve?: Resolver) => new WebhookTransport(loadConfig({ STARLAB_WEBHOOK_ALLOWED_NETWORKS: allowed }), resolve);
const post = (t: WebhookTransport, url: string, timeoutMs = 5000) => t.post(url, { headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs });

/**
 * Every client socket this process opens (Node publishes each on `net.client.socket`, before it
 * connects): a refusal must open none.
 */
function countSockets(): { readonly opened: Socket[]; stop: () => void } {
  const opened: Socket[] = [];
  const listener = (message: unknown) => opened.push((message as { socket: Socket }).socket);
  subscribe('net.client.socket', listener);
  return { opened, stop: () => unsubscribe('net.client.socket', listener) };
}

/** Against real HTTP servers on loopback: what is sent arrives as sent, what comes back is the status, and what the policy refuses is never sent. */
describe('WebhookTransport', () => {
  let server: Server;
  let other: Server;
  let port: number;
  let url: string;
  let received: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[];
  let receivedByOther: number;
  let answer: number | 'never' | 'redirect';

  beforeAll(async () => {
    other = createServer((_req, res) => {
      receivedByOther++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (answer === 'redirect') res.writeHead(307, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/elsewhere` }).end();
        else if (answer !== 'never') res.writeHead(answer).end('ignored');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}/hook?x=1`;
  });
  beforeEach(() => {
    received = [];
    receivedByOther = 0;
    answer = 204;
  });
  afterAll(async () => {
    for (const s of [server, other]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  describe('to an allowed endpoint', () => {
    const allowed = () => transport('127.0.0.1');

    it('POSTs the body with the given headers and returns the status', async () => {
      const result = await allowed().post(url, { headers: { 'content-type': 'application/json', 'webhook-id': 'd1' }, body: '{"a":1}', timeoutMs: 5000 });
      expect(result).toEqual({ status: 204, ok: true });
      expect(received).toEqual([{ method: 'POST', url: '/hook?x=1', headers: expect.objectContaining({ 'content-type': 'application/json', 'webhook-id': 'd1', 'content-length': '7' }), body: '{"a":1}' }]);
    });

    it('reports a non-2xx answer as an answer, not as a failure', async () => {
      answer = 503;
      expect(await post(allowed(), url)).toEqual({ status: 503, ok: false });
    });

    it('rejects when the endpoint does not answer within the timeout', async () => {
      answer = 'never';
      await expect(post(allowed(), url, 200)).rejects.toThrow(/no answer within the timeout/);
    });

    it('does not follow a redirect: the 3xx is the answer, and its target hears nothing', async () => {
      answer = 'redirect';
      expect(await post(allowed(), url)).toEqual({ status: 307, ok: false });
      expect(received).toHaveLength(1);
      expect(receivedByOther).toBe(0);
    });

    it('connects to the address it checked, resolving the name once', async () => {
      const lookups: string[] = [];
      // A name only this resolver knows: the request can only have gone where it said.
      const resolver: Resolver = async (hostname) => (lookups.push(hostname), [{ address: '127.0.0.1', family: 4 }]);
      expect(await post(transport('127.0.0.1/32', resolver), `http://hooks.lab.test:${port}/pinned`)).toEqual({ status: 204, ok: true });
      expect(lookups).toEqual(['hooks.lab.test']);
      expect(received).toEqual([expect.objectContaining({ url: '/pinned', headers: expect.objectContaining({ host: `hooks.lab.test:${port}` }) })]);
    });
  });

  describe('by default', () => {
    let sockets: ReturnType<typeof countSockets>;
    beforeEach(() => (sockets = countSockets()));
    afterEach(() => sockets.stop());

    // PORT: the loopback server's, so that a request that did go out would be received.
    const privateTargets = [
      ['http://127.0.0.1:PORT/hook', '127.0.0.1 is a loopback address'],
      ['http://127.8.9.10:PORT/hook', '127.8.9.10 is a loopback address'],
      ['http://2130706433:PORT/hook', '127.0.0.1 is a loopback address'], // decimal form of 127.0.0.1
      ['http://[::1]:PORT/hook', '::1 is a loopback address'],
      ['http://[::ffff:127.0.0.1]:PORT/hook', '::ffff:7f00:1 is a loopback address'],
      ['http://[64:ff9b::7f00:1]:PORT/hook', '64:ff9b::7f00:1 maps to 127.0.0.1 is a loopback address'],
      ['http://10.1.2.3/hook', '10.1.2.3 is a private address'],
      ['https://172.20.0.5/hook', '172.20.0.5 is a private address'],
      ['http://192.168.1.1:8080/hook', '192.168.1.1 is a private address'],
      ['http://100.100.100.200/latest', '100.100.100.200 is a private address'],
      ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a private address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address (where cloud metadata services answer)'],
      ['http://[fe80::1]/hook', 'fe80::1 is a link-local address (where cloud metadata services answer)'],
      ['http://0.0.0.0/hook', '0.0.0.0 is an unspecified address'],
      ['http://224.0.0.1/hook', '224.0.0.1 is a multicast or broadcast address'],
      ['http://192.0.0.192/opc/v1/instance/', '192.0.0.192 is a reserved or special-purpose address'],
    ];

    it.each(privateTargets)('refuses %s before opening a connection: %s', async (target, reason) => {
      const refusal = post(transport(), target.replace('PORT', String(port)));
      await expect(refusal).rejects.toThrow(RefusedTarget);
      await expect(refusal).rejects.toThrow(`refused: ${reason}`);
      expect(sockets.opened).toHaveLength(0);
      expect(received).toHaveLength(0);
    });

    it('refuses a name that resolves to a private address, and one with a private address among public ones', async () => {
      const metadata: Resolver = async () => [{ address: '169.254.169.254', family: 4 }];
      await expect(post(transport('', metadata), 'http://metadata.google.internal/computeMetadata/v1/')).rejects.toThrow('refused: metadata.google.internal resolves to 169.254.169.254 is a link-local address');
      const mixed: Resolver = async () => [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }];
      await expect(post(transport('', mixed), 'https://hooks.example.org/x')).rejects.toThrow('refused: hooks.example.org resolves to 10.0.0.7 is a private address');
      // The system resolver too: localhost is loopback.
      await expect(post(transport(), `http://localhost:${port}/hook`)).rejects.toThrow(/^refused: localhost resolves to (127\.0\.0\.1|::1) is a loopback address$/);
      // A trailing dot, capitals or a name under localhost (RFC 6761) are localhost, whatever a resolver would say.
      const nowhere: Resolver = async () => [{ address: '93.184.215.14', family: 4 }];
      for (const name of ['localhost.', 'LOCALHOST.', 'app.localhost']) {
        await expect(post(transport('', nowhere), `http://${name}:${port}/hook`)).rejects.toThrow(`refused: ${name.replace(/\.$/, '').toLowerCase()} resolves to 127.0.0.1 is a loopback address`);
      }
      // A link-local address with a zone is no URL a request can be sent to.
      await expect(transport().check('http://[fe80::1%25lo]/', 1000)).rejects.toThrow(RefusedTarget);
      expect(sockets.opened).toHaveLength(0);
      expect(received).toHaveLength(0);
    });

    it('refuses other schemes', async () => {
      await expect(post(transport(), 'ftp://files.example.org/hook')).rejects.toThrow('refused: ftp: is not http or https');
      expect(sockets.opened).toHaveLength(0);
    });

    it('allows a private network that is on the allowlist, and only that one', async () => {
      expect(await post(transport('127.0.0.0/8,10.0.0.0/8'), url)).toEqual({ status: 204, ok: true });
      expect(sockets.opened).toHaveLength(1); // the positive control: this one did connect
      await expect(post(transport('127.0.0.0/8'), 'http://192.168.1.1/hook')).rejects.toThrow('192.168.1.1 is a private address');
      expect(sockets.opened).toHaveLength(1);
    });

    it('checks a URL at registration: refused targets throw, names that do not resolve now pass', async () => {
      await expect(transport().check(`http://127.0.0.1:${port}/hook`, 2000)).rejects.toThrow(RefusedTarget);
      await expect(transport('', async () => [{ address: '10.9.9.9', family: 4 }]).check('https://hooks.lab.internal/x', 2000)).rejects.toThrow('resolves to 10.9.9.9 is a private address');
      const unknown: Resolver = async () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.org'), { code: 'ENOTFOUND' }));
      await expect(transport('', unknown).check('https://hooks.example.org/x', 2000)).resolves.toBeUndefined();
      expect(sockets.opened).toHaveLength(0);
    });
  });
});

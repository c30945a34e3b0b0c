import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookRepository } from '../../src/repositories/webhook.repository';
import { TestStack } from '../support/stack';

/** Webhook registration and POST /v1/webhooks/{id}/test through real HTTP, to receivers on loopback. */
describe('webhooks (real HTTP)', () => {
  // Loopback is allowed here, as a lab with internal hooks would allow its network; the
  // background sender polls only once a minute, so nothing but the request under test sends.
  const stack = new TestStack({ apiEnv: { STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', STARLAB_WEBHOOK_POLL_MS: '60000' } });
  let receiver: Server;
  let receiverUrl: string;
  const received: { id: string; type: string }[] = [];

  beforeAll(async () => {
    await stack.start();
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ id: String(req.headers['webhook-id']), type: JSON.parse(body).type });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  }, 60_000);
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await stack.stop();
  }, 30_000);

  it('accepts an allowlisted network, and still refuses a private one that is not on the list', async () => {
    expect((await stack.request('POST', '/v1/webhooks', { body: { url: receiverUrl } })).status).toBe(201);
    const refused = await stack.request('POST', '/v1/webhooks', { body: { url: 'http://10.0.0.8/hook' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ field: 'body.url', message: expect.stringContaining('refused: 10.0.0.8 is a private address') }]);
  });

  it('a test sends only its own delivery: others’ due deliveries are neither claimed nor delayed', async () => {
    const other = (await stack.request('POST', '/v1/users', { body: { name: 'waiting-for-hooks' } })).body;
    const mine = (await stack.request('POST', '/v1/webhooks', { body: { url: receiverUrl, events: ['job.succeeded'] } })).body;
    const theirs = (await stack.request('POST', '/v1/webhooks', { key: other.apiKey.key, body: { url: receiverUrl, events: ['job.succeeded'] } })).body;
    // The other user's delivery is due now, waiting for the background sender.
    expect(await stack.app.get(WebhookRepository).enqueue(other.user.id, 'job.succeeded', { type: 'job.succeeded' })).toBe(1);
    const [due] = await stack.prisma.webhookDelivery.findMany({ where: { webhookId: theirs.id } });

    received.length = 0;
    const test = await stack.request('POST', `/v1/webhooks/${mine.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ deliveryId: expect.any(String), status: 'delivered', responseStatus: 204, error: null });
    expect(received).toEqual([{ id: test.body.deliveryId, type: 'webhook.test' }]);
    const after = await stack.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: due.id } });
    expect(after).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: due.nextAttemptAt });
  });
});

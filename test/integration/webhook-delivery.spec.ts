import { Test, TestingModule } from '@nestjs/testing';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG, loadConfig } from '../../src/config/config';
import { DATABASE_URL, PrismaService } from '../../src/repositories/prisma.service';
import { WebhookRepository } from '../../src/repositories/webhook.repository';
import { WebhookTransport } from '../../src/repositories/webhook-transport';
import { WebhookService } from '../../src/services/webhook.service';
import { createTestDatabase, TestDatabase } from '../support/database';

/**
 * Two API replicas sending webhooks from one database, to an endpoint that never answers (each
 * attempt runs into the timeout): a delivery one replica has claimed is not sent by the other
 * while it is in flight, however many the batch holds.
 */
describe('webhook delivery leases (two senders, real Postgres, real HTTP)', () => {
  let database: TestDatabase;
  let endpoint: Server;
  const replicas: TestingModule[] = [];
  const received: string[] = [];
  const TIMEOUT_MS = 1000;

  beforeAll(async () => {
    database = await createTestDatabase();
    endpoint = createServer((req) => received.push(String(req.headers['webhook-id']))); // never answers
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const config = loadConfig({
      DATABASE_URL: database.url,
      STARLAB_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      STARLAB_WEBHOOK_RETRY_BASE_MS: '3600000', // a failed attempt is not due again during the test
      STARLAB_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1',
    });
    for (let i = 0; i < 2; i++) {
      const replica = await Test.createTestingModule({
        providers: [PrismaService, { provide: DATABASE_URL, useValue: database.url }, { provide: APP_CONFIG, useValue: config }, WebhookRepository, WebhookTransport, WebhookService],
      }).compile();
      await replica.init();
      replicas.push(replica);
    }
  }, 30_000);
  afterAll(async () => {
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
    for (const replica of replicas) await replica.close();
    await database?.drop();
  }, 30_000);

  it('a batch of due deliveries is sent once, while another replica polls during and after it', async () => {
    const prisma = replicas[0].get(PrismaService);
    const user = await prisma.user.create({ data: { name: 'hooked', role: 'member' } });
    const hook = await replicas[0].get(WebhookRepository).create(user.id, `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/slow`, ['job.succeeded'], 'whsec_dGVzdA==');
    const due = 6;
    for (let i = 0; i < due; i++) await replicas[0].get(WebhookRepository).enqueue(user.id, 'job.succeeded', { type: 'job.succeeded', n: i });
    const [first, second] = replicas.map((replica) => replica.get(WebhookService));

    const batch = first.sendDue();
    // The other replica polls while the batch is in flight, and again after a claim of three
    // endpoint timeouts would have run out.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 2));
    await second.sendDue();
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS));
    await second.sendDue();
    await batch;

    expect(received).toHaveLength(due);
    expect(new Set(received).size).toBe(due);
    const deliveries = await prisma.webhookDelivery.findMany({ where: { webhookId: hook.id } });
    expect(deliveries.map((d) => [d.attempts, d.status])).toEqual(Array(due).fill([1, 'pending']));
    expect(deliveries.every((d) => /no answer within the timeout/.test(d.lastError ?? ''))).toBe(true);
  }, 30_000);
});

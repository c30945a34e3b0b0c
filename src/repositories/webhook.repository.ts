import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** Webhooks and their delivery queue (an outbox in Postgres, delivered with retries). */
@Injectable()
export class WebhookRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(userId: string, url: string, events: string[], secret: string) {
    return this.prisma.webhook.create({ data: { userId, url, events, secret } });
  }

  list(userId: string) {
    return this.prisma.webhook.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
  }

  find(id: string) {
    return this.prisma.webhook.findUnique({ where: { id } });
  }

  remove(id: string) {
    return this.prisma.webhook.delete({ where: { id } });
  }

  /** Queues one delivery per active webhook of the user subscribed to the event (or to '*'). */
  async enqueue(userId: string, eventType: string, payload: Prisma.InputJsonObject): Promise<number> {
    const hooks = await this.prisma.webhook.findMany({ where: { userId, active: true, OR: [{ events: { has: eventType } }, { events: { has: '*' } }] }, select: { id: true } });
    if (hooks.length === 0) return 0;
    const { count } = await this.prisma.webhookDelivery.createMany({
      data: hooks.map((hook) => ({ webhookId: hook.id, eventType, payload, status: 'pending', nextAttemptAt: new Date() })),
    });
    return count;
  }

  /** One delivery, created already claimed by its creator for `leaseMs` (see claimDue). */
  enqueueLeased(webhookId: string, eventType: string, payload: Prisma.InputJsonObject, leaseMs: number): Promise<DueDelivery> {
    return this.prisma.webhookDelivery.create({ data: { webhookId, eventType, payload, status: 'pending', nextAttemptAt: new Date(Date.now() + leaseMs) }, include: { webhook: true } });
  }

  /**
   * Claims up to `limit` due deliveries with a lease: their next attempt moves `leaseMs` ahead in
   * one statement (SKIP LOCKED), so replicas never send one twice and a sender that dies
   * mid-delivery only delays it. The caller records the outcome with `complete`.
   */
  async claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const claimed = await this.prisma.$queryRaw<{ id: string }[]>`
      UPDATE webhook_deliveries SET next_attempt_at = now() + (${leaseMs} * interval '1 millisecond')
      WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    if (claimed.length === 0) return [];
    return this.prisma.webhookDelivery.findMany({ where: { id: { in: claimed.map((c) => c.id) } }, include: { webhook: true } });
  }

  complete(id: string, data: Prisma.WebhookDeliveryUpdateInput) {
    return this.prisma.webhookDelivery.update({ where: { id }, data });
  }

  deliveries(webhookId: string, limit: number) {
    return this.prisma.webhookDelivery.findMany({ where: { webhookId }, orderBy: { createdAt: 'desc' }, take: limit });
  }
}

export type DueDelivery = Prisma.WebhookDeliveryGetPayload<{ include: { webhook: true } }>;

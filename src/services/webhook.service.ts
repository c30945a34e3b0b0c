import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { CreatedWebhookView, CreateWebhookBody, WebhookDeliveryListView, WebhookListView, WebhookTestResultView, WebhookView } from '../contracts/webhooks.dto';
import { DueDelivery, WebhookRepository } from '../repositories/webhook.repository';
import { RefusedTarget, WebhookTransport } from '../repositories/webhook-transport';
import type { Principal } from './auth.service';
import { NotFound, ValidationFailed } from './errors';
import { isUuid } from './job.service';
import { newWebhookSecret, signWebhook } from './webhook-signature';

/** Attempts before a delivery is given up; delay before attempt n+1 = base × factor[n]. */
const RETRY_FACTORS = [1, 6, 24, 120, 360, 720];
const MAX_ATTEMPTS = RETRY_FACTORS.length + 1;
/** Deliveries claimed (and sent, all at once) per pass. */
const BATCH = 20;
/** Longest a URL check at registration waits for DNS. */
const REGISTRATION_LOOKUP_MS = 5000;

/** Webhook registration and delivery: signed (Standard Webhooks), retried with backoff. */
@Injectable()
export class WebhookService implements OnModuleDestroy {
  private readonly logger = new Logger(WebhookService.name);
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly transport: WebhookTransport,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, body: CreateWebhookBody): Promise<CreatedWebhookView> {
    try {
      await this.transport.check(body.url, Math.min(this.config.webhooks.timeoutMs, REGISTRATION_LOOKUP_MS));
    } catch (error) {
      if (!(error instanceof RefusedTarget)) throw error;
      throw new ValidationFailed([{ field: 'body.url', message: `is ${error.message} (STARLAB_WEBHOOK_ALLOWED_NETWORKS lists networks an admin allows)` }]);
    }
    const secret = newWebhookSecret();
    const hook = await this.webhooks.create(principal.userId, body.url, body.events ?? ['collapse.warning'], secret);
    return { ...this.view(hook), secret };
  }

  async list(principal: Principal): Promise<WebhookListView> {
    return { data: (await this.webhooks.list(principal.userId)).map((hook) => this.view(hook)) };
  }

  async remove(principal: Principal, id: string): Promise<void> {
    await this.owned(principal, id);
    await this.webhooks.remove(id);
  }

  /**
   * Sends a `webhook.test` event now and reports what the endpoint answered. The delivery is
   * created already leased to this request, so no sender takes it meanwhile, and nothing else is
   * claimed.
   */
  async test(principal: Principal, id: string): Promise<WebhookTestResultView> {
    await this.owned(principal, id);
    const delivery = await this.webhooks.enqueueLeased(id, 'webhook.test', { type: 'webhook.test', timestamp: new Date().toISOString(), data: { webhookId: id } }, this.leaseMs());
    const outcome = await this.deliver(delivery);
    return { deliveryId: delivery.id, status: outcome.status, responseStatus: outcome.responseStatus ?? null, error: outcome.lastError ?? null };
  }

  async deliveries(principal: Principal, id: string): Promise<WebhookDeliveryListView> {
    await this.owned(principal, id);
    const rows = await this.webhooks.deliveries(id, 50);
    return { data: rows.map((d) => ({ id: d.id, eventType: d.eventType, status: d.status, attempts: d.attempts, nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null, lastError: d.lastError, createdAt: d.createdAt.toISOString() })) };
  }

  start(): void {
    this.timer ??= setInterval(() => void this.sendDue(), this.config.webhooks.pollMs);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * One pass of the sender: claims up to BATCH due deliveries and sends them all at once. Each
   * attempt ends within the endpoint timeout, so the lease (leaseMs) outlasts the whole batch
   * and no other replica takes a delivery that is still in flight.
   */
  async sendDue(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const due = await this.webhooks.claimDue(BATCH, this.leaseMs());
      await Promise.all(due.map((delivery) => this.deliver(delivery).catch((error: Error) => this.logger.warn(`webhook delivery ${delivery.id}: ${error.message}`))));
    } catch (error) {
      this.logger.warn(`webhook pass failed: ${(error as Error).message}`);
    } finally {
      this.busy = false;
    }
  }

  /** How long a claimed delivery is kept from other senders: one endpoint timeout for the attempt, as long again and 10 s for recording its outcome. */
  private leaseMs(): number {
    return 2 * this.config.webhooks.timeoutMs + 10_000;
  }

  /** One attempt: sign, POST, record delivered / retry later / failed. */
  private async deliver(delivery: DueDelivery): Promise<{ status: string; responseStatus?: number; lastError?: string }> {
    const body = JSON.stringify(delivery.payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const attempts = delivery.attempts + 1;
    let responseStatus: number | undefined;
    let lastError: string | undefined;
    try {
      const response = await this.transport.post(delivery.webhook.url, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'StarLab-Webhooks/1',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(delivery.webhook.secret, delivery.id, timestamp, body),
        },
        body,
        timeoutMs: this.config.webhooks.timeoutMs,
      });
      responseStatus = response.status;
      if (!response.ok) lastError = `endpoint answered ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    const delivered = lastError === undefined;
    const status = delivered ? 'delivered' : attempts >= MAX_ATTEMPTS ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(Date.now() + this.config.webhooks.retryBaseMs * RETRY_FACTORS[attempts - 1]) : null;
    await this.webhooks.complete(delivery.id, { status, attempts, nextAttemptAt, lastError: lastError ?? null });
    if (!delivered) this.logger.warn(`webhook ${delivery.webhookId} delivery ${delivery.id} attempt ${attempts}: ${lastError}`);
    return { status, responseStatus, lastError };
  }

  private async owned(principal: Principal, id: string) {
    const hook = isUuid(id) ? await this.webhooks.find(id) : null;
    if (!hook || (hook.userId !== principal.userId && principal.role !== 'admin')) throw new NotFound('webhook', id);
    return hook;
  }

  private view(hook: { id: string; url: string; events: string[]; active: boolean; createdAt: Date }): WebhookView {
    return { id: hook.id, url: hook.url, events: hook.events, active: hook.active, createdAt: hook.createdAt.toISOString() };
  }
}

import type { CreatedWebhookView, WebhookDeliveryListView, WebhookListView, WebhookTestResultView } from '../../contracts/webhooks.dto';
import type { ApiClient } from './api-client';
import { ago, table, tableColumns } from './format';
import { Io, UsageError } from './jobs';

const USAGE = 'webhooks list | webhooks create --endpoint URL [--events a,b] | webhooks test <id> | webhooks deliveries <id> | webhooks delete <id>';

/** `starlab webhooks …`: the caller's webhooks (signed POSTs on collapse warnings and job ends). */
export async function webhooks(client: ApiClient, io: Io, positionals: string[], options: { endpoint?: string; events?: string; json: boolean }): Promise<void> {
  const [action, ...rest] = positionals;
  const id = () => {
    if (rest.length !== 1) throw new UsageError(USAGE);
    return encodeURIComponent(rest[0]);
  };
  const print = (value: unknown, text: () => string) => io.out(options.json ? JSON.stringify(value, null, 2) : text());
  if (action === 'list' && rest.length === 0) {
    const { data } = await client.get<WebhookListView>('/v1/webhooks');
    return print(data, () => (data.length ? table(['ID', 'URL', 'EVENTS', 'ACTIVE', 'CREATED'], data.map((w) => [w.id, w.url, w.events.join(','), w.active ? 'yes' : 'no', ago(w.createdAt)]), tableColumns(), 1) : 'no webhooks'));
  }
  if (action === 'create' && rest.length === 0) {
    if (!options.endpoint) throw new UsageError('webhooks create needs --endpoint URL (an http(s) endpoint; --url is the StarLab service)');
    const events = options.events?.split(',').map((e) => e.trim()).filter(Boolean);
    const created = await client.post<CreatedWebhookView>('/v1/webhooks', { url: options.endpoint, ...(events ? { events } : {}) });
    if (options.json) return io.out(JSON.stringify(created, null, 2));
    io.out(created.secret);
    io.err(`webhook ${created.id} → ${created.url} on ${created.events.join(', ')}; the secret above verifies its signatures and is shown only once`);
    return;
  }
  if (action === 'test') {
    const result = await client.post<WebhookTestResultView>(`/v1/webhooks/${id()}/test`);
    return print(result, () => `test delivery ${result.deliveryId}: ${result.status}${result.responseStatus !== null ? ` (HTTP ${result.responseStatus})` : ''}${result.error ? `: ${result.error}` : ''}`);
  }
  if (action === 'deliveries') {
    const { data } = await client.get<WebhookDeliveryListView>(`/v1/webhooks/${id()}/deliveries`);
    return print(data, () => (data.length ? table(['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST ERROR', 'CREATED'], data.map((d) => [d.id, d.eventType, d.status, String(d.attempts), d.lastError ?? '', ago(d.createdAt)]), tableColumns(), 4) : 'no deliveries'));
  }
  if (action === 'delete') {
    const webhookId = id();
    await client.request('DELETE', `/v1/webhooks/${webhookId}`);
    return io.out(`deleted webhook ${decodeURIComponent(webhookId)}`);
  }
  throw new UsageError(USAGE);
}

import type { ApiClient } from './api-client';
import { ago, table, tableColumns } from './format';
import type { Io } from './jobs';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  current: boolean;
}

export async function listKeys(client: ApiClient, io: Io, user: string | undefined, json: boolean): Promise<void> {
  const { data } = await client.get<{ data: ApiKey[] }>(`/v1/api-keys${user ? `?user=${encodeURIComponent(user)}` : ''}`);
  if (json) return io.out(JSON.stringify(data, null, 2));
  const rows = data.map((k) => [k.id, k.name, `${k.prefix}…`, ago(k.createdAt), ago(k.lastUsedAt), k.revokedAt ? `revoked ${ago(k.revokedAt)}` : k.current ? 'active (this key)' : 'active']);
  io.out(rows.length ? table(['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATE'], rows, tableColumns()) : 'no API keys');
}

export async function createKey(client: ApiClient, io: Io, name: string, user: string | undefined, json: boolean): Promise<void> {
  const issued = await client.post<{ id: string; name: string; key: string }>('/v1/api-keys', { name, ...(user ? { user } : {}) });
  if (json) return io.out(JSON.stringify(issued, null, 2));
  io.out(issued.key);
  io.err(`issued API key ${issued.name} (${issued.id}); the key above is shown only once`);
}

export async function revokeKey(client: ApiClient, io: Io, id: string): Promise<void> {
  await client.request('DELETE', `/v1/api-keys/${encodeURIComponent(id)}`);
  io.out(`revoked API key ${id}`);
}

import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parse as parseYaml } from 'yaml';
import type { ApiClient } from './api-client';
import { ago, csv, metric, table, tableColumns } from './format';

/** What a command prints: results on stdout, notes on stderr. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export class UsageError extends Error {}

export interface JobView {
  id: string;
  name: string;
  status: string;
  owner: { name: string };
  currentStep: number;
  totalSteps: number;
  progress: number;
  attempt: number;
  backend: string | null;
  worker: string | null;
  error: string | null;
  latestMetrics: Record<string, number> | null;
  queue: { position: number; reason: string } | null;
  spec: { environment?: { id?: string }; algorithm?: { id?: string } };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A job spec from a JSON or YAML file (by extension; `-` reads standard input as either). */
export function readSpec(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const extension = extname(path).toLowerCase();
  try {
    if (extension === '.json') return JSON.parse(text);
    return parseYaml(text); // YAML is a superset of JSON, so this reads both
  } catch (error) {
    throw new UsageError(`${path} is not valid ${extension === '.json' ? 'JSON' : 'YAML or JSON'}: ${(error as Error).message.split('\n')[0]}`);
  }
}

export async function submit(client: ApiClient, io: Io, path: string, options: { idempotencyKey?: string; quiet?: boolean; json?: boolean }): Promise<JobView> {
  const spec = readSpec(path);
  const { status, body: job } = await client.request<JobView>('POST', '/v1/jobs', spec, options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {});
  if (options.quiet) io.out(job.id);
  else if (options.json) io.out(JSON.stringify(job, null, 2));
  else io.out(`${status === 200 ? 'already submitted' : 'submitted'} ${job.name} as job ${job.id} (${job.status}${job.queue ? `, position ${job.queue.position}: ${job.queue.reason}` : ''})`);
  return job;
}

export async function list(client: ApiClient, io: Io, query: Record<string, string | undefined>, json: boolean): Promise<void> {
  const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  const page = await client.get<{ data: JobView[]; has_more: boolean; next_cursor: string | null }>(`/v1/jobs?${params}`);
  if (json) return io.out(JSON.stringify(page, null, 2));
  if (page.data.length === 0) return io.out('no jobs');
  const rows = page.data.map((j) => [
    j.id.slice(0, 8),
    j.name,
    j.status,
    j.owner.name,
    `${j.spec.environment?.id ?? '?'}/${j.spec.algorithm?.id ?? '?'}`,
    `${j.currentStep}/${j.totalSteps}`,
    ago(j.createdAt),
  ]);
  io.out(table(['ID', 'NAME', 'STATUS', 'OWNER', 'ENV/ALGORITHM', 'STEP', 'CREATED'], rows, tableColumns()));
  if (page.has_more) io.err(`more jobs: --after ${page.next_cursor}`);
}

/** A job id, or a unique prefix of one of the caller's recent jobs (as `list` shows them). */
export async function resolveJobId(client: ApiClient, idOrPrefix: string): Promise<string> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix)) return idOrPrefix;
  if (!/^[0-9a-f-]{4,35}$/i.test(idOrPrefix)) throw new UsageError(`${idOrPrefix} is not a job id`);
  const page = await client.get<{ data: JobView[] }>('/v1/jobs?limit=100');
  const matches = page.data.filter((j) => j.id.startsWith(idOrPrefix.toLowerCase()));
  if (matches.length === 1) return matches[0].id;
  throw new UsageError(matches.length === 0 ? `no recent job starts with ${idOrPrefix}` : `${idOrPrefix} is ambiguous: ${matches.map((j) => j.id).join(', ')}`);
}

export async function show(client: ApiClient, io: Io, id: string, json: boolean): Promise<void> {
  const [job, warnings, checkpoints] = await Promise.all([
    client.get<JobView>(`/v1/jobs/${id}`),
    client.get<{ data: { severity: string }[] }>(`/v1/jobs/${id}/warnings`),
    client.get<{ data: { step: number; health: string }[] }>(`/v1/jobs/${id}/checkpoints`),
  ]);
  if (json) return io.out(JSON.stringify(job, null, 2));
  const bySeverity = (s: string) => warnings.data.filter((w) => w.severity === s).length;
  const lines = [
    `${job.name}  ${job.id}`,
    `  status      ${job.status}${job.queue ? ` (position ${job.queue.position}: ${job.queue.reason})` : ''}${job.error ? ` — ${job.error}` : ''}`,
    `  owner       ${job.owner.name}`,
    `  spec        ${job.spec.environment?.id ?? '?'} / ${job.spec.algorithm?.id ?? '?'}`,
    `  progress    step ${job.currentStep}/${job.totalSteps} (${(job.progress * 100).toFixed(1)}%), attempt ${job.attempt}`,
    `  runs on     ${job.backend ?? '-'} on ${job.worker ?? '-'}`,
    `  created     ${job.createdAt} (${ago(job.createdAt)})${job.finishedAt ? `, finished ${ago(job.finishedAt)}` : ''}`,
    `  warnings    ${bySeverity('critical')} critical, ${bySeverity('warning')} warning, ${bySeverity('info')} info`,
    `  checkpoints ${checkpoints.data.map((c) => `${c.step}:${c.health}`).join(' ') || '-'}`,
  ];
  const latest = Object.entries(job.latestMetrics ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (latest.length) lines.push('  latest metrics', ...latest.map(([name, value]) => `    ${name.padEnd(30)} ${metric(value)}`));
  io.out(lines.join('\n'));
}

export async function control(client: ApiClient, io: Io, id: string, action: 'cancel' | 'pause' | 'resume'): Promise<void> {
  const job = await client.post<JobView>(`/v1/jobs/${id}/${action}`);
  const pending = job.status === 'running' ? { pause: ' (pausing after its current step)', cancel: ' (stopping within seconds)', resume: '' }[action] : '';
  io.out(`job ${job.id}: ${job.status}${pending}`);
}

/** Step metrics as CSV: one row per step, one column per metric name (empty where a step has none). */
export async function metricsCsv(client: ApiClient, io: Io, id: string, query: { names?: string; from?: string; to?: string }, outPath?: string): Promise<void> {
  const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  const { data } = await client.get<{ data: { step: number; metrics: Record<string, number> }[] }>(`/v1/jobs/${id}/metrics?${params}`);
  const names = query.names ? query.names.split(',').map((n) => n.trim()).filter(Boolean) : [...new Set(data.flatMap((r) => Object.keys(r.metrics)))].sort();
  const text = csv([['step', ...names], ...data.map((r) => [r.step, ...names.map((n) => r.metrics[n])])]);
  if (!outPath) {
    process.stdout.write(text);
    return;
  }
  writeFileSync(outPath, text);
  io.err(`wrote ${data.length} steps × ${names.length} metrics to ${outPath}`);
}

/** Saves a checkpoint of the job: the latest, or the one at `step`. */
export async function downloadCheckpoint(client: ApiClient, io: Io, id: string, options: { step?: number; out?: string }): Promise<void> {
  const { data } = await client.get<{ data: { id: string; step: number; health: string; sizeBytes: number; downloadUrl: string }[] }>(`/v1/jobs/${id}/checkpoints`);
  if (data.length === 0) throw new UsageError(`job ${id} has no checkpoints yet`);
  const checkpoint = options.step === undefined ? data[data.length - 1] : data.find((c) => c.step === options.step);
  if (!checkpoint) throw new UsageError(`job ${id} has no checkpoint at step ${options.step}; it has steps ${data.map((c) => c.step).join(', ')}`);
  const { body, fileName } = await client.download(checkpoint.downloadUrl);
  const path = options.out ?? basename(fileName ?? `${id}-step${checkpoint.step}.starlab-ckpt`);
  await pipeline(Readable.fromWeb(body as WebReadableStream<Uint8Array>), createWriteStream(path));
  io.out(`saved ${path} (${checkpoint.sizeBytes} bytes, step ${checkpoint.step}, ${checkpoint.health})`);
}

import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parse as parseYaml } from 'yaml';
import type { ApiClient } from './api-client';
import { formatDuration } from '../progress';
import { ago, csv, metric, table, tableColumns } from './format';

/** Fewest characters of an id that `show`, `watch` and the other job commands accept as a prefix. */
export const MIN_PREFIX = 4;

/** The statuses a job does not leave. */
export const ENDED: readonly string[] = ['succeeded', 'failed', 'cancelled'];

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
  labels?: Record<string, string>;
  /** The supervised warm-up before RL step 1: `completed` of `steps` (null without one). */
  warmup?: { kind: string; steps: number; completed: number; etaSeconds: number | null } | null;
  eta?: { seconds: number; finishAt: string; secondsPerStep: number } | null;
  forkedFrom?: { jobId: string; step: number } | null;
  experiment?: { id: string; cell: number } | null;
  archivedAt?: string | null;
  purgedAt?: string | null;
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
  const rows = page.data.map((j) => [j.id.slice(0, 8), j.name, j.status, j.owner.name, `${j.spec.environment?.id ?? '?'}/${j.spec.algorithm?.id ?? '?'}`, phaseOf(j), etaOf(j), ago(j.createdAt)]);
  io.out(table(['ID', 'NAME', 'STATUS', 'OWNER', 'ENV/ALGORITHM', 'PROGRESS', 'ETA', 'CREATED'], rows, tableColumns()));
  if (page.has_more) io.err(`more jobs: --after ${page.next_cursor}`);
}

/** A job id, or a unique prefix of one of the caller's recent jobs (as `list` shows them). */
export async function resolveJobId(client: ApiClient, idOrPrefix: string): Promise<string> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrPrefix)) return idOrPrefix;
  if (!/^[0-9a-f-]{1,35}$/i.test(idOrPrefix)) throw new UsageError(`${idOrPrefix} is not a job id`);
  if (idOrPrefix.length < MIN_PREFIX) throw new UsageError(`${idOrPrefix}: a job id prefix needs at least ${MIN_PREFIX} characters`);
  const page = await client.get<{ data: JobView[] }>('/v1/jobs?limit=100');
  const matches = page.data.filter((j) => j.id.startsWith(idOrPrefix.toLowerCase()));
  if (matches.length === 1) return matches[0].id;
  throw new UsageError(matches.length === 0 ? `no recent job starts with ${idOrPrefix}` : `${idOrPrefix} is ambiguous: ${matches.map((j) => j.id).join(', ')}`);
}

/** Which phase a job is in and how far: `warm-up 120/400` until step 0 is stored, then `step 37/100`. */
export function phaseOf(job: Pick<JobView, 'warmup' | 'currentStep' | 'totalSteps' | 'status'>): string {
  const warmup = job.warmup;
  if (warmup && warmup.completed < warmup.steps && job.currentStep === 0 && !ENDED.includes(job.status)) return `warm-up ${warmup.completed}/${warmup.steps}`;
  return `step ${job.currentStep}/${job.totalSteps}`;
}

/** Time left in the job's current phase (the warm-up's, then the RL steps'), '-' when unknown. */
export function etaOf(job: Pick<JobView, 'warmup' | 'eta' | 'status'>): string {
  if (job.status !== 'running') return '-';
  const seconds = job.warmup && job.warmup.completed < job.warmup.steps ? job.warmup.etaSeconds : (job.eta?.seconds ?? null);
  return seconds === null ? '-' : formatDuration(seconds);
}

interface WarmupPhase {
  kind: string;
  steps: number;
  state: string;
  reused: boolean | null;
  completed: number;
  etaSeconds: number | null;
  seconds: number | null;
  loss: { step: number; loss: number }[];
  finalLoss: number | null;
}

/** The warm-up as `show` prints it: state, progress, time and the loss from its first report to its last. */
function warmupLine(w: WarmupPhase): string {
  if (w.state === 'none') return 'none';
  const loss = w.loss.length > 0 ? `, loss ${metric(w.loss[0].loss)} → ${metric(w.finalLoss ?? w.loss[w.loss.length - 1].loss)}` : w.finalLoss !== null ? `, loss ${metric(w.finalLoss)}` : '';
  if (w.state === 'done') return `${w.kind}, ${w.steps} steps, done${w.reused ? ' (reused from the worker’s cache)' : w.seconds !== null ? ` in ${formatDuration(w.seconds)}` : ''}${loss}`;
  if (w.state === 'running') return `${w.kind}, ${w.completed}/${w.steps} steps (${((100 * w.completed) / w.steps).toFixed(0)}%)${w.etaSeconds !== null ? `, eta ${formatDuration(w.etaSeconds)}` : ''}${loss}`;
  return `${w.kind}, ${w.steps} steps, not started`;
}

export async function show(client: ApiClient, io: Io, id: string, json: boolean): Promise<void> {
  const [job, warnings, checkpoints, warmup] = await Promise.all([
    client.get<JobView>(`/v1/jobs/${id}`),
    client.get<{ data: { severity: string }[] }>(`/v1/jobs/${id}/warnings`),
    client.get<{ data: { step: number; health: string }[] }>(`/v1/jobs/${id}/checkpoints`),
    client.get<WarmupPhase>(`/v1/jobs/${id}/warmup`),
  ]);
  if (json) return io.out(JSON.stringify(job, null, 2));
  const bySeverity = (s: string) => warnings.data.filter((w) => w.severity === s).length;
  const lines = [
    `${job.name}  ${job.id}`,
    `  status      ${job.status}${job.queue ? ` (position ${job.queue.position}: ${job.queue.reason})` : ''}${job.error ? ` — ${job.error}` : ''}`,
    `  owner       ${job.owner.name}`,
    `  spec        ${job.spec.environment?.id ?? '?'} / ${job.spec.algorithm?.id ?? '?'}`,
    `  warm-up     ${warmupLine(warmup)}`,
    `  progress    ${phaseOf(job)}${job.currentStep > 0 || warmup.state === 'done' ? ` (${(job.progress * 100).toFixed(1)}%)` : ''}, attempt ${job.attempt}${etaOf(job) !== '-' ? `, eta ${etaOf(job)}` : ''}`,
    `  runs on     ${job.backend ?? '-'} on ${job.worker ?? '-'}`,
    `  created     ${job.createdAt} (${ago(job.createdAt)})${job.finishedAt ? `, finished ${ago(job.finishedAt)}` : ''}`,
    `  warnings    ${bySeverity('critical')} critical, ${bySeverity('warning')} warning, ${bySeverity('info')} info`,
    `  checkpoints ${checkpoints.data.map((c) => `${c.step}:${c.health}`).join(' ') || '-'}`,
  ];
  if (job.labels && Object.keys(job.labels).length) lines.push(`  labels      ${Object.entries(job.labels).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (job.forkedFrom) lines.push(`  forked from ${job.forkedFrom.jobId} at step ${job.forkedFrom.step}`);
  if (job.experiment) lines.push(`  experiment  ${job.experiment.id} (cell ${job.experiment.cell + 1})`);
  if (job.archivedAt) lines.push(`  archived    ${ago(job.archivedAt)}${job.purgedAt ? '; purged: results and checkpoints deleted' : ''}`);
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

/** `starlab archive <job>`: hides an ended job from lists, or with `--purge` deletes its results and checkpoints. */
export async function archive(client: ApiClient, io: Io, id: string, purge: boolean): Promise<void> {
  const job = (await client.request<JobView>('DELETE', `/v1/jobs/${id}${purge ? '?purge=true' : ''}`)).body;
  io.out(`job ${job.id} ${purge ? 'purged: its results and checkpoints are deleted' : 'archived (starlab list --archived shows it)'}`);
}

import type { ExperimentActionView, ExperimentListView, ExperimentSummaryView, ExperimentView } from '../../contracts/experiments.dto';
import type { ApiClient } from './api-client';
import { ago, table, tableColumns } from './format';
import { Io, MIN_PREFIX, UsageError, readSpec } from './jobs';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : (100 * x).toFixed(1));

/** `starlab experiment submit FILE`: an experiment (`{name, base, grid}`) from a JSON or YAML file. */
export async function submitExperiment(client: ApiClient, io: Io, path: string, options: { idempotencyKey?: string; quiet?: boolean; json?: boolean }): Promise<ExperimentView> {
  const body = readSpec(path);
  const { status, body: experiment } = await client.request<ExperimentView>('POST', '/v1/experiments', body, options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {});
  if (options.quiet) io.out(experiment.id);
  else if (options.json) io.out(JSON.stringify(experiment, null, 2));
  else io.out(`${status === 200 ? 'already submitted' : 'submitted'} experiment ${experiment.name} as ${experiment.id}: ${experiment.cells.length} cells, ${experiment.jobs} jobs (${experiment.status})`);
  return experiment;
}

/** An experiment id, or a unique prefix (at least MIN_PREFIX characters) of one of the caller's recent experiments. */
export async function resolveExperimentId(client: ApiClient, idOrPrefix: string): Promise<string> {
  if (UUID.test(idOrPrefix)) return idOrPrefix;
  if (!/^[0-9a-f-]+$/i.test(idOrPrefix)) throw new UsageError(`${idOrPrefix} is not an experiment id`);
  if (idOrPrefix.length < MIN_PREFIX) throw new UsageError(`${idOrPrefix}: an experiment id prefix needs at least ${MIN_PREFIX} characters`);
  const pages = await Promise.all([false, true].map((archived) => client.get<ExperimentListView>(`/v1/experiments?limit=100&archived=${archived}`)));
  const matches = pages.flatMap((p) => p.data).filter((e) => e.id.startsWith(idOrPrefix.toLowerCase()));
  if (matches.length === 1) return matches[0].id;
  throw new UsageError(matches.length === 0 ? `no recent experiment starts with ${idOrPrefix}` : `${idOrPrefix} is ambiguous: ${matches.map((e) => e.id).join(', ')}`);
}

const progressText = (e: Pick<ExperimentSummaryView, 'progress'>) =>
  `${(100 * e.progress.fraction).toFixed(0)}% (${Object.entries(e.progress.byStatus).map(([status, n]) => `${n} ${status}`).join(', ')})`;

/** `starlab experiment show`: the table (a line per cell), then its jobs. */
export async function showExperiment(client: ApiClient, io: Io, id: string, json: boolean): Promise<void> {
  const e = await client.get<ExperimentView>(`/v1/experiments/${id}`);
  if (json) return io.out(JSON.stringify(e, null, 2));
  const reference = (c: ExperimentView['cells'][number]) => (c.optimal !== null ? `${pct(c.optimal)} optimal` : c.expert !== null ? `${pct(c.expert)} expert` : '–');
  const columns = tableColumns();
  io.out(
    [
      `${e.name}  ${e.id}`,
      `  status      ${e.status}${e.archivedAt ? ` (archived${e.purgedAt ? ', purged' : ''})` : ''}, ${progressText(e)}`,
      `  owner       ${e.owner.name}, created ${ago(e.createdAt)}`,
      `  grid        ${Object.entries(e.grid).map(([path, values]) => `${path} ∈ ${JSON.stringify(values)}`).join('  ×  ')}`,
      `  table       ${e.metric} in %: after the warm-up → after RL, mean over the seeds (min–max)${e.references === 'computing' ? '; references still computing' : ''}`,
      '',
      table(['CELL', 'AFTER WARM-UP → AFTER RL', 'SEEDS DONE', 'RANDOM', 'OPTIMUM/EXPERT'], e.cells.map((c) => [c.label, c.table, `${c.finished}/${c.seeds.length}`, pct(c.random), reference(c)]), columns, 0),
      '',
      table(
        ['JOB', 'NAME', 'SEED', 'STATUS', 'STEP', 'WARM-UP → RL', 'DIGEST'],
        e.cells.flatMap((c) => c.runs.map((r) => [r.jobId.slice(0, 8), r.name, String(r.seed), r.status, `${r.currentStep}/${r.totalSteps}`, `${pct(r.afterWarmup)} → ${pct(r.afterRl)}`, r.digest])),
        columns,
      ),
    ].join('\n'),
  );
}

export async function listExperiments(client: ApiClient, io: Io, archived: boolean, json: boolean): Promise<void> {
  const page = await client.get<ExperimentListView>(`/v1/experiments?limit=100&archived=${archived}`);
  if (json) return io.out(JSON.stringify(page, null, 2));
  if (page.data.length === 0) return io.out(archived ? 'no archived experiments' : 'no experiments');
  io.out(table(['ID', 'NAME', 'STATUS', 'OWNER', 'CELLS', 'JOBS', 'PROGRESS', 'CREATED'], page.data.map((e) => [e.id.slice(0, 8), e.name, e.status, e.owner.name, String(e.cells), String(e.jobs), progressText(e), ago(e.createdAt)]), tableColumns()));
}

/** Cancel, pause or resume every job of the experiment; says which were skipped, and why. */
export async function controlExperiment(client: ApiClient, io: Io, id: string, action: 'cancel' | 'pause' | 'resume'): Promise<void> {
  const result = await client.post<ExperimentActionView>(`/v1/experiments/${id}/${action}`);
  const done = result.jobs.filter((j) => j.outcome === 'done').length;
  const requested = result.jobs.filter((j) => j.outcome === 'requested').length;
  const running = requested > 0 ? ` (${requested} running: requested, carried out within seconds)` : '';
  io.out(`experiment ${result.experiment.id}: ${action} ${done + requested} of ${result.jobs.length} jobs${running}; now ${result.experiment.status}`);
  for (const job of result.jobs.filter((j) => j.outcome === 'skipped')) io.err(`  skipped ${job.jobId}: ${job.detail ?? job.status}`);
}

export async function archiveExperiment(client: ApiClient, io: Io, id: string, purge: boolean): Promise<void> {
  const e = (await client.request<ExperimentSummaryView>('DELETE', `/v1/experiments/${id}${purge ? '?purge=true' : ''}`)).body;
  io.out(`experiment ${e.id} ${purge ? 'purged: its results and checkpoints are deleted' : 'archived (starlab experiment list --archived shows it)'}`);
}

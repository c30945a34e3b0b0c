import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/config';
import type {
  CreateExperimentBody,
  ExperimentActionView,
  ExperimentCurvesQuery,
  ExperimentCurvesView,
  ExperimentListView,
  ExperimentSummaryView,
  ExperimentView,
  ListExperimentsQuery,
} from '../contracts/experiments.dto';
import { ExperimentJobRow, ExperimentRepository, ExperimentRow } from '../repositories/experiment.repository';
import { ReferencesRepository } from '../repositories/references.repository';
import { UserRepository } from '../repositories/user.repository';
import type { References } from '../training/experiment/baselines';
import { band } from '../training/experiment/cells';
import { canonicalJson } from '../training/experiment/digest';
import { ExperimentCell, Grid, expandGrid } from '../training/experiment/grid';
import { EnvironmentServerRepository, EnvironmentServerRow, serverAddress, storedDefinition } from '../repositories/environment-server.repository';
import { parseJobSpec, parseStoredJobSpec } from '../training/spec/validate';
import { canControl, canRead } from './access';
import type { Principal } from './auth.service';
import { DispatchService } from './dispatch.service';
import { Conflict, NotFound, QuotaExceeded, Unprocessable, ValidationFailed } from './errors';
import { EVAL_SERIES, SpecDigests, cellsOf, experimentStatus, progressOf } from './experiment-table';
import { decodeCursor, encodeCursor } from './job-view';
import { JobService, checkIdempotencyKey, isUuid, newJob, stableJson } from './job.service';

/** References kept in memory (each a few numbers), oldest dropped first. */
const KNOWN_REFERENCES = 256;
type Action = 'cancel' | 'pause' | 'resume';

/**
 * Experiments: a base spec × a grid of spec paths, submitted as one unit (docs/experiments.md).
 * Its table is computed as the benches compute theirs (src/training/experiment/cells.ts), beside
 * the random agent, the optimum and the expert on the same evaluation seeds, which are computed
 * once per experiment in a child process and stored.
 */
@Injectable()
export class ExperimentService {
  private readonly logger = new Logger(ExperimentService.name);
  /** Experiments whose references are being computed by this process. */
  private readonly computing = new Map<string, Promise<void>>();
  /** References by what they depend on, so that experiments over the same environment share them. */
  private readonly known = new Map<string, References>();
  private readonly digests = new SpecDigests();

  constructor(
    private readonly experiments: ExperimentRepository,
    private readonly users: UserRepository,
    private readonly jobs: JobService,
    private readonly dispatch: DispatchService,
    private readonly references: ReferencesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly environments: EnvironmentServerRepository,
  ) {}

  /**
   * Expands and checks every run, then stores the experiment and its jobs together, or nothing:
   * an invalid run is a 400 naming it, a grid over the owner's queued-jobs quota a 429 with the
   * count. With an Idempotency-Key, a retry returns the first experiment.
   */
  async submit(principal: Principal, body: CreateExperimentBody, idempotencyKey: string | undefined): Promise<{ experiment: ExperimentView; replayed: boolean }> {
    checkIdempotencyKey(idempotencyKey);
    const requestHash = idempotencyKey ? createHash('sha256').update(stableJson(body)).digest('hex') : null;
    if (idempotencyKey) {
      const existing = await this.experiments.findByIdempotencyKey(principal.userId, idempotencyKey);
      if (existing) return { experiment: await this.view(this.replay(existing, requestHash)), replayed: true };
    }
    const served = await this.environments.definitionFor(body.base);
    const { cells, runs } = expandGrid(body.base, body.grid as Grid, body.name, served);
    const jobs = runs.map((run) => ({ ...newJob(principal, parseJobSpec(run.spec, served)), experimentCell: run.cell }));
    const limit = (maxQueued: number | null) => maxQueued ?? this.config.scheduling.maxQueuedJobs;
    let created;
    try {
      created = await this.experiments.create(
        { ownerId: principal.userId, name: body.name, base: body.base as object, grid: body.grid as object, cells: cells as unknown as object, idempotencyKey: idempotencyKey ?? null, requestHash },
        jobs,
        (owner) => {
          const quota = limit(owner.maxQueuedJobs);
          if (owner.queued + jobs.length > quota) {
            const error = new QuotaExceeded(`this experiment has ${jobs.length} jobs; you have ${owner.queued} queued and your quota is ${quota}, so at most ${Math.max(0, quota - owner.queued)} more fit. Shrink the grid or wait for some jobs to start.`, 60);
            Object.assign(error.extensions, { jobs: jobs.length, queued: owner.queued, quota });
            throw error;
          }
        },
      );
    } catch (error) {
      const winner = idempotencyKey && (error as { code?: string })?.code === 'P2002' ? await this.experiments.findByIdempotencyKey(principal.userId, idempotencyKey) : null;
      if (!winner) throw error;
      return { experiment: await this.view(this.replay(winner, requestHash)), replayed: true };
    }
    for (const job of created.jobs) this.dispatch.added({ id: job.id, ownerId: job.ownerId, priority: job.priority, device: job.device, createdAt: job.createdAt });
    this.dispatch.kick();
    this.logger.log(`experiment ${created.experiment.id} submitted by ${principal.name}: ${cells.length} cells, ${jobs.length} jobs`);
    return { experiment: await this.view(created.experiment), replayed: false };
  }

  async list(principal: Principal, query: ListExperimentsQuery): Promise<ExperimentListView> {
    const before = query.after ? decodeCursor(query.after) : undefined;
    if (before === null) throw new ValidationFailed([{ field: 'query.after', message: 'is not a cursor returned by this API' }]);
    const limit = query.limit ?? 20;
    const rows = await this.experiments.list({ ownerIds: principal.role === 'admin' ? null : [principal.userId], archived: query.archived ?? false, before, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const jobs = await this.experiments.jobsOf(page.map((e) => e.id));
    return {
      data: page.map((experiment) => this.summary(experiment, jobs.filter((job) => job.experimentId === experiment.id))),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  async summaryOf(principal: Principal, id: string): Promise<ExperimentSummaryView> {
    const experiment = await this.readable(principal, id);
    return this.summary(experiment, await this.experiments.jobsOf([experiment.id]));
  }

  async get(principal: Principal, id: string): Promise<ExperimentView> {
    return this.view(await this.readable(principal, id));
  }

  /** A metric's curve per cell with the seeds' spread (mean, min, max at each step). */
  async curves(principal: Principal, id: string, query: ExperimentCurvesQuery): Promise<ExperimentCurvesView> {
    const experiment = await this.readable(principal, id);
    const jobs = await this.experiments.jobsOf([experiment.id]);
    const metric = query.metric ?? EVAL_SERIES[0];
    const readings = await this.experiments.series(jobs.map((j) => j.id), metric);
    const cells = experiment.cells as unknown as ExperimentCell[];
    return {
      metric,
      cells: cells.map((cell) => {
        const curves = jobs
          .filter((job) => job.experimentCell === cell.index)
          .map((job) => Object.fromEntries(readings.filter((r) => r.jobId === job.id).map((r) => [r.step, r.value])) as Record<number, number>);
        return { index: cell.index, label: cell.label, points: band(curves) };
      }),
    };
  }

  /** Cancel, pause or resume every job of the experiment that allows it; the others are listed as skipped, with why. */
  async control(principal: Principal, id: string, action: Action): Promise<ExperimentActionView> {
    const experiment = await this.controllable(principal, id);
    const jobs = await this.experiments.jobsOf([experiment.id]);
    const outcomes: ExperimentActionView['jobs'] = [];
    for (const job of jobs) {
      try {
        const answer = await this.jobs[action](principal, job.id);
        const pending = 'pending' in answer && answer.pending;
        const view = 'job' in answer ? answer.job : answer;
        outcomes.push({ jobId: job.id, status: view.status, outcome: pending ? 'requested' : 'done' });
      } catch (error) {
        if (!(error instanceof Conflict)) throw error;
        outcomes.push({ jobId: job.id, status: job.status, outcome: 'skipped', detail: error.message });
      }
    }
    this.logger.log(`experiment ${id}: ${action} by ${principal.name}, ${outcomes.filter((o) => o.outcome === 'done').length} of ${jobs.length} jobs`);
    return { experiment: this.summary(experiment, await this.experiments.jobsOf([experiment.id])), jobs: outcomes };
  }

  /** An experiment the caller may read, else 404. */
  async readable(principal: Principal, id: string): Promise<ExperimentRow> {
    const experiment = isUuid(id) ? await this.experiments.findById(id) : null;
    if (!experiment || !canRead(principal, experiment)) throw new NotFound('experiment', id);
    return experiment;
  }

  async controllable(principal: Principal, id: string): Promise<ExperimentRow> {
    const experiment = await this.readable(principal, id);
    if (!canControl(principal, experiment)) throw new NotFound('experiment', id);
    return experiment;
  }

  private replay(existing: ExperimentRow, requestHash: string | null): ExperimentRow {
    if (existing.requestHash !== requestHash) throw new Unprocessable('this Idempotency-Key was already used with a different request body');
    return existing;
  }

  private summary(experiment: ExperimentRow, jobs: ExperimentJobRow[]): ExperimentSummaryView {
    return {
      id: experiment.id,
      name: experiment.name,
      owner: { id: experiment.owner.id, name: experiment.owner.name },
      status: experimentStatus(jobs),
      cells: (experiment.cells as unknown[]).length,
      jobs: jobs.length,
      progress: progressOf(jobs),
      createdAt: experiment.createdAt.toISOString(),
      archivedAt: experiment.archivedAt?.toISOString() ?? null,
    };
  }

  private async view(experiment: ExperimentRow): Promise<ExperimentView> {
    const jobs = await this.experiments.jobsOf([experiment.id]);
    const readings = await this.experiments.endpointReadings(jobs.map((j) => j.id), EVAL_SERIES);
    const stored = (experiment.references ?? {}) as Record<string, References | { error: string }>;
    const cells = experiment.cells as unknown as ExperimentCell[];
    const missing = cells.some((cell) => !stored[cell.key]);
    if (missing) this.computeReferences(experiment, jobs);
    const failed = cells.some((cell) => stored[cell.key] && 'error' in stored[cell.key]);
    return {
      ...this.summary(experiment, jobs),
      base: experiment.base as Record<string, unknown>,
      grid: experiment.grid as Record<string, unknown[]>,
      metric: EVAL_SERIES[0],
      references: failed ? 'failed' : missing ? 'computing' : 'ready',
      cells: cellsOf(cells, jobs, readings, (cell) => {
        const found = stored[cell.key];
        return found && !('error' in found) ? found : null;
      }, this.digests, await this.environments.definitionFor(experiment.base)),
      purgedAt: experiment.purgedAt?.toISOString() ?? null,
    };
  }

  /**
   * Starts computing the references of the cells that lack them, once per experiment at a time
   * in this process; the result is stored, so later reads (by any replica) find it.
   */
  private computeReferences(experiment: ExperimentRow, jobs: ExperimentJobRow[]): void {
    if (this.computing.has(experiment.id)) return;
    const cells = experiment.cells as unknown as ExperimentCell[];
    // A registered environment's references are played on its server, as its jobs are; the
    // server's address and manifest digest belong in what they depend on.
    const dependsOn = (spec: ReturnType<typeof parseStoredJobSpec>) => canonicalJson({ environment: spec.environment, served: registered?.digest ?? null, rollout: spec.rollout, model: spec.model, evalEpisodes: spec.training.evalEpisodes });
    let registered: EnvironmentServerRow | null = null;
    const work = (async () => {
      registered = await this.environments.registrationFor(experiment.base);
      const served = registered ? storedDefinition(registered) : undefined;
      const specs = cells.map((cell) => {
        const job = jobs.find((j) => j.experimentCell === cell.index);
        return job ? parseStoredJobSpec(job.spec, served) : null;
      });
      const unknown = specs.filter((spec): spec is NonNullable<typeof spec> => spec !== null && !this.known.has(dependsOn(spec)));
      const address = registered ? { id: registered.id, address: serverAddress(registered), digest: registered.digest } : undefined;
      const computed = unknown.length > 0 ? await this.references.compute(unknown, address) : [];
      unknown.forEach((spec, i) => this.known.set(dependsOn(spec), computed[i]));
      while (this.known.size > KNOWN_REFERENCES) this.known.delete(this.known.keys().next().value as string);
      const stored = Object.fromEntries(cells.flatMap((cell, i) => (specs[i] ? [[cell.key, this.known.get(dependsOn(specs[i]!))!]] : [])));
      await this.experiments.setReferences(experiment.id, stored as object);
    })()
      .catch(async (error: Error) => {
        this.logger.warn(`experiment ${experiment.id}: references not computed: ${error.message}`);
        await this.experiments.setReferences(experiment.id, Object.fromEntries(cells.map((cell) => [cell.key, { error: error.message }]))).catch(() => undefined);
      })
      .finally(() => this.computing.delete(experiment.id));
    this.computing.set(experiment.id, work);
  }

  /** For tests and shutdown: resolves when this process computes no references. */
  async idle(): Promise<void> {
    await Promise.all(this.computing.values());
  }
}


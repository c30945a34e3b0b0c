import { Injectable, Logger } from '@nestjs/common';
import type { ExperimentSummaryView } from '../contracts/experiments.dto';
import type { JobView } from '../contracts/jobs.dto';
import { ArchiveRepository } from '../repositories/archive.repository';
import { ExperimentRepository } from '../repositories/experiment.repository';
import { canControl } from './access';
import type { Principal } from './auth.service';
import { Conflict, NotFound } from './errors';
import { ExperimentService } from './experiment.service';
import { JobService } from './job.service';

/**
 * Archive and purge (docs/experiments.md, "Archive"): an ended job or experiment is hidden from
 * lists and pickers and keeps its results; purged, its results and checkpoints are deleted. Only
 * the owner or an admin may; a job that has not ended is a 409 (cancel it first).
 */
@Injectable()
export class ArchiveService {
  private readonly logger = new Logger(ArchiveService.name);

  constructor(
    private readonly archive: ArchiveRepository,
    private readonly experimentRows: ExperimentRepository,
    private readonly jobs: JobService,
    private readonly experiments: ExperimentService,
  ) {}

  async archiveJob(principal: Principal, id: string, purge: boolean): Promise<JobView> {
    const job = await this.jobs.readable(principal, id);
    if (!canControl(principal, job)) throw new NotFound('job', id);
    const outcome = purge ? await this.archive.purge(id, principal.name) : await this.archive.archive(id, principal.name);
    if (outcome === 'active') throw new Conflict(`job ${id} is ${(await this.jobs.readable(principal, id)).status}; only an ended job can be ${purge ? 'purged' : 'archived'}: cancel it first`);
    if (outcome !== 'already') this.logger.log(`job ${id} ${outcome} by ${principal.name}`);
    return this.jobs.view(await this.jobs.readable(principal, id));
  }

  /** Every job of the experiment must have ended; then each is archived (or purged) and the experiment with them. */
  async archiveExperiment(principal: Principal, id: string, purge: boolean): Promise<ExperimentSummaryView> {
    const experiment = await this.experiments.controllable(principal, id);
    const active = await this.archive.activeJobsOf(id);
    if (active.length > 0) {
      throw new Conflict(`experiment ${id} has ${active.length} job(s) that have not ended (${active.slice(0, 5).map((j) => `${j.id} ${j.status}`).join(', ')}); cancel it first`);
    }
    if (purge) {
      for (const job of await this.experimentRows.jobsOf([id])) {
        if ((await this.archive.purge(job.id, principal.name)) === 'active') throw new Conflict(`job ${job.id} of experiment ${id} was restarted meanwhile; cancel it first`);
      }
      await this.experimentRows.markPurged(id);
    } else {
      await this.experimentRows.archive(id);
    }
    this.logger.log(`experiment ${id} (${experiment.name}) ${purge ? 'purged' : 'archived'} by ${principal.name}`);
    return this.experiments.summaryOf(principal, id);
  }
}

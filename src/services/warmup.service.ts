import { Injectable } from '@nestjs/common';
import type { WarmupView } from '../contracts/jobs.dto';
import { ProgressRepository } from '../repositories/progress.repository';
import type { Principal } from './auth.service';
import { JobService } from './job.service';
import { warmupView } from './warmup-view';

/** A job's warm-up as a phase of its own: state, progress, ETA and loss curve (warmup-view.ts). */
@Injectable()
export class WarmupService {
  constructor(
    private readonly jobs: JobService,
    private readonly progress: ProgressRepository,
  ) {}

  async get(principal: Principal, id: string): Promise<WarmupView> {
    const job = await this.jobs.readable(principal, id);
    return warmupView(job, await this.progress.warmupHistory(id), new Date());
  }
}

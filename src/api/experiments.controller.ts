import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ArchiveQuerySchema } from '../contracts/archive.dto';
import { CreateExperimentSchema, ExperimentCurvesQuerySchema, ListExperimentsQuerySchema } from '../contracts/experiments.dto';
import { ArchiveService } from '../services/archive.service';
import type { Principal } from '../services/auth.service';
import { ExperimentService } from '../services/experiment.service';
import { Caller } from './auth.guard';
import { BadRequestResponse, ConflictResponse, IdempotentReplayResponse, JsonBody, Operation, QueryParams, UnprocessableResponse, problem } from './openapi.decorators';
import { parseInput } from './validation';

const ExperimentIdParam = () => ApiParam({ name: 'id', description: 'experiment id', schema: { type: 'string', format: 'uuid' } });
const NotFound = () => problem(404, 'no such experiment visible to the caller');

@ApiTags('experiments')
@Controller('v1/experiments')
export class ExperimentsController {
  constructor(
    private readonly experiments: ExperimentService,
    private readonly archive: ArchiveService,
  ) {}

  @Post()
  @Operation({
    id: 'submitExperiment',
    summary: 'Submit a base spec × a grid of spec paths as one unit: every job is queued, or none',
    description: 'Every run is checked first (a 400 names the run and field); a grid over the owner’s queued-jobs quota is a 429 whose problem gives `jobs`, `queued` and `quota`. A replay of an Idempotency-Key answers 200 with the first experiment.',
    status: 201,
    response: 'Experiment',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'retries with the same key and body return the same experiment' })
  @JsonBody('CreateExperiment')
  @BadRequestResponse()
  @IdempotentReplayResponse('Experiment')
  @UnprocessableResponse('the Idempotency-Key was already used with a different body')
  async submitExperiment(@Caller() caller: Principal, @Body() body: unknown, @Headers('idempotency-key') key: string | undefined, @Res({ passthrough: true }) res: Response) {
    const { experiment, replayed } = await this.experiments.submit(caller, parseInput(CreateExperimentSchema, body, 'body'), key);
    if (replayed) res.status(200).setHeader('Idempotent-Replayed', 'true');
    return experiment;
  }

  @Get()
  @Operation({ id: 'listExperiments', summary: 'List experiments (own, or all for admins), newest first', response: 'ExperimentList' })
  @QueryParams(ListExperimentsQuerySchema)
  @BadRequestResponse()
  listExperiments(@Caller() caller: Principal, @Query() query: unknown) {
    return this.experiments.list(caller, parseInput(ListExperimentsQuerySchema, query, 'query'));
  }

  @Get(':id')
  @Operation({ id: 'getExperiment', summary: 'The experiment’s table (per cell: evaluation after the warm-up and after RL over the seeds, the random agent and the optimum), progress and jobs', response: 'Experiment' })
  @ExperimentIdParam()
  @NotFound()
  getExperiment(@Caller() caller: Principal, @Param('id') id: string) {
    return this.experiments.get(caller, id);
  }

  @Get(':id/curves')
  @Operation({ id: 'getExperimentCurves', summary: 'A metric per cell by step, with the seeds’ spread (mean, min, max)', response: 'ExperimentCurves' })
  @ExperimentIdParam()
  @QueryParams(ExperimentCurvesQuerySchema)
  @BadRequestResponse()
  @NotFound()
  getExperimentCurves(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.experiments.curves(caller, id, parseInput(ExperimentCurvesQuerySchema, query, 'query'));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Operation({ id: 'cancelExperiment', summary: 'Cancel every job of the experiment that can be', response: 'ExperimentAction' })
  @ExperimentIdParam()
  @NotFound()
  cancelExperiment(@Caller() caller: Principal, @Param('id') id: string) {
    return this.experiments.control(caller, id, 'cancel');
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Operation({ id: 'pauseExperiment', summary: 'Pause every job of the experiment that can be', response: 'ExperimentAction' })
  @ExperimentIdParam()
  @NotFound()
  pauseExperiment(@Caller() caller: Principal, @Param('id') id: string) {
    return this.experiments.control(caller, id, 'pause');
  }

  @Post(':id/resume')
  @HttpCode(200)
  @Operation({ id: 'resumeExperiment', summary: 'Resume every paused job of the experiment', response: 'ExperimentAction' })
  @ExperimentIdParam()
  @NotFound()
  resumeExperiment(@Caller() caller: Principal, @Param('id') id: string) {
    return this.experiments.control(caller, id, 'resume');
  }

  @Delete(':id')
  @Operation({ id: 'archiveExperiment', summary: 'Archive an ended experiment and its jobs (hidden from lists, results kept); with purge=true delete their results and checkpoints', response: 'ExperimentSummary' })
  @ExperimentIdParam()
  @QueryParams(ArchiveQuerySchema)
  @BadRequestResponse()
  @NotFound()
  @ConflictResponse()
  archiveExperiment(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.archive.archiveExperiment(caller, id, parseInput(ArchiveQuerySchema, query, 'query').purge ?? false);
  }
}

import { Body, Controller, Get, Header, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../services/auth.service';
import { JobService } from '../services/job.service';
import { ResultsService } from '../services/results.service';
import { Caller } from './auth.guard';
import { EventsQuerySchema, ListJobsQuerySchema, MetricsQuerySchema, TrajectoriesQuerySchema } from '../contracts/jobs.dto';
import { AdminJobActionResponse, BadRequestResponse, ConflictResponse, IdempotentReplayResponse, JobIdParam, JsonBody, NotFoundResponse, Operation, QueryParams, UnprocessableResponse } from './openapi.decorators';
import { writeEventStream } from './sse';
import { BacktestBodySchema, WarningsQuerySchema } from '../contracts/warnings.dto';
import { parseInput } from './validation';

@ApiTags('jobs')
@Controller('v1/jobs')
export class JobsController {
  constructor(
    private readonly jobs: JobService,
    private readonly results: ResultsService,
  ) {}

  @Post()
  @Operation({ id: 'submitJob', summary: 'Submit a training job', status: 201, response: 'Job', description: 'A replay of an Idempotency-Key answers 200 with the first job and `Idempotent-Replayed: true`.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'retries with the same key and body return the same job' })
  @JsonBody('JobSpec')
  @BadRequestResponse()
  @IdempotentReplayResponse()
  @UnprocessableResponse('the Idempotency-Key was already used with a different body')
  async submitJob(@Caller() caller: Principal, @Body() body: unknown, @Headers('idempotency-key') key: string | undefined, @Res({ passthrough: true }) res: Response) {
    const { job, replayed } = await this.jobs.submit(caller, body, key);
    if (replayed) res.status(200).setHeader('Idempotent-Replayed', 'true');
    return job;
  }

  @Get()
  @Operation({ id: 'listJobs', summary: 'List jobs (own, or all for admins), newest first', response: 'JobList' })
  @QueryParams(ListJobsQuerySchema)
  @BadRequestResponse()
  listJobs(@Caller() caller: Principal, @Query() query: unknown) {
    return this.jobs.list(caller, parseInput(ListJobsQuerySchema, query, 'query'));
  }

  @Get(':id')
  @Operation({ id: 'getJob', summary: 'Status, progress, latest metrics and queue position of a job', response: 'Job' })
  @JobIdParam()
  @NotFoundResponse()
  getJob(@Caller() caller: Principal, @Param('id') id: string) {
    return this.jobs.get(caller, id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Operation({ id: 'cancelJob', summary: 'Cancel a job (a running one stops within seconds)', response: 'Job' })
  @JobIdParam()
  @NotFoundResponse()
  @ConflictResponse()
  cancelJob(@Caller() caller: Principal, @Param('id') id: string) {
    return this.jobs.cancel(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Operation({ id: 'pauseJob', summary: 'Pause a job (a running one checkpoints after its current step)', response: 'Job' })
  @JobIdParam()
  @NotFoundResponse()
  @ConflictResponse()
  pauseJob(@Caller() caller: Principal, @Param('id') id: string) {
    return this.jobs.pause(caller, id);
  }

  @Post(':id/resume')
  @HttpCode(200)
  @Operation({ id: 'resumeJob', summary: 'Resume a paused job from its last checkpoint', response: 'Job' })
  @JobIdParam()
  @NotFoundResponse()
  @ConflictResponse()
  resumeJob(@Caller() caller: Principal, @Param('id') id: string) {
    return this.jobs.resume(caller, id);
  }

  @Post(':id/preempt')
  @HttpCode(200)
  @Operation({ id: 'preemptJob', summary: 'Admins: checkpoint a running job, requeue it, resume it later exactly', response: 'Job' })
  @JobIdParam()
  @AdminJobActionResponse()
  @NotFoundResponse()
  @ConflictResponse()
  preemptJob(@Caller() caller: Principal, @Param('id') id: string) {
    return this.jobs.preempt(caller, id);
  }

  @Get(':id/metrics')
  @Operation({ id: 'getJobMetrics', summary: 'Step metrics, filtered by names and step range', response: 'MetricSeries' })
  @JobIdParam()
  @QueryParams(MetricsQuerySchema)
  @NotFoundResponse()
  @Header('Content-Type', 'application/json; charset=utf-8')
  getJobMetrics(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.results.metricsJson(caller, id, parseInput(MetricsQuerySchema, query, 'query'));
  }

  @Get(':id/events')
  @Operation({ id: 'listJobEvents', summary: 'Ordered events: state changes, steps, checkpoints, warnings, logs', response: 'JobEventList' })
  @JobIdParam()
  @QueryParams(EventsQuerySchema)
  @NotFoundResponse()
  listJobEvents(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.results.events(caller, id, parseInput(EventsQuerySchema, query, 'query'));
  }

  @Get(':id/stream')
  @Operation({ id: 'streamJobEvents', summary: 'Server-sent events of the job; resumable with Last-Event-ID', contentType: 'text/event-stream', response: 'EventStream' })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'id of the last event received; the stream continues after it' })
  @JobIdParam()
  @NotFoundResponse()
  async streamJobEvents(@Caller() caller: Principal, @Param('id') id: string, @Headers('last-event-id') lastEventId: string | undefined, @Req() req: Request, @Res() res: Response) {
    await this.jobs.readable(caller, id);
    await writeEventStream(req, res, (signal) => this.results.follow(caller, id, BigInt(/^\d{1,18}$/.test(lastEventId ?? '') ? lastEventId! : 0), signal));
  }

  @Get(':id/warnings')
  @Operation({ id: 'listJobWarnings', summary: 'Collapse warnings: step, detector, signal, value, threshold, severity, explanation', response: 'WarningList' })
  @JobIdParam()
  @QueryParams(WarningsQuerySchema)
  @NotFoundResponse()
  listJobWarnings(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.results.warnings(caller, id, parseInput(WarningsQuerySchema, query, 'query'));
  }

  @Post(':id/warnings/backtest')
  @HttpCode(200)
  @Operation({ id: 'backtestJobWarnings', summary: 'Replay collapse rules over the job’s stored metrics and return what would have fired', response: 'BacktestResult' })
  @JobIdParam()
  @JsonBody('BacktestBody')
  @BadRequestResponse()
  @NotFoundResponse()
  backtestJobWarnings(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.results.backtest(caller, id, parseInput(BacktestBodySchema, body, 'body'));
  }

  @Get(':id/trajectories')
  @Operation({ id: 'listJobTrajectories', summary: 'Trajectory metadata (and kept transcripts) by step, success, return', response: 'TrajectoryList' })
  @JobIdParam()
  @QueryParams(TrajectoriesQuerySchema)
  @NotFoundResponse()
  listJobTrajectories(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.results.trajectories(caller, id, parseInput(TrajectoriesQuerySchema, query, 'query'));
  }

  @Get(':id/checkpoints')
  @Operation({ id: 'listJobCheckpoints', summary: 'Checkpoints of the job with their health', response: 'CheckpointList' })
  @JobIdParam()
  @NotFoundResponse()
  listJobCheckpoints(@Caller() caller: Principal, @Param('id') id: string) {
    return this.results.checkpoints(caller, id);
  }
}

import { Body, Controller, Delete, Get, Header, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Principal } from '../services/auth.service';
import { ControlAnswer, JobService } from '../services/job.service';
import { ResultsService } from '../services/results.service';
import { ArchiveService } from '../services/archive.service';
import { WarmupService } from '../services/warmup.service';
import { ArchiveQuerySchema } from '../contracts/archive.dto';
import { Caller } from './auth.guard';
import { EventsQuerySchema, IDEMPOTENCY_KEY_MAX, ListJobsQuerySchema, MetricsQuerySchema, TrajectoriesQuerySchema } from '../contracts/jobs.dto';
import { AdminJobActionResponse, BadRequestResponse, ConflictResponse, ControlAcceptedResponse, IdempotentReplayResponse, JobIdParam, JsonBody, NotFoundResponse, Operation, QueryParams, UnprocessableResponse } from './openapi.decorators';
import { writeEventStream } from './sse';
import { BacktestBodySchema, WarningsQuerySchema } from '../contracts/warnings.dto';
import { parseInput } from './validation';

@ApiTags('jobs')
@Controller('v1/jobs')
export class JobsController {
  constructor(
    private readonly jobs: JobService,
    private readonly results: ResultsService,
    private readonly archive: ArchiveService,
    private readonly warmups: WarmupService,
  ) {}

  @Post()
  @Operation({ id: 'submitJob', summary: 'Submit a training job', status: 201, response: 'Job', description: 'A replay of an Idempotency-Key answers 200 with the first job and `Idempotent-Replayed: true`.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: `retries with the same key and body return the same job; 1–${IDEMPOTENCY_KEY_MAX} visible ASCII characters (anything else is a 400 naming the header)` })
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

  @Delete(':id')
  @Operation({
    id: 'archiveJob',
    summary: 'Archive an ended job: hidden from lists (?archived=true shows it), results kept; with purge=true its results and checkpoints are deleted',
    description: 'The owner or an admin. A job that has not ended is a 409: cancel it first. Archiving twice is harmless.',
    response: 'Job',
  })
  @JobIdParam()
  @QueryParams(ArchiveQuerySchema)
  @BadRequestResponse()
  @NotFoundResponse()
  @ConflictResponse()
  archiveJob(@Caller() caller: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.archive.archiveJob(caller, id, parseInput(ArchiveQuerySchema, query, 'query').purge ?? false);
  }

  @Get(':id/warmup')
  @Operation({ id: 'getJobWarmup', summary: 'The warm-up as a phase: state, progress, ETA and loss curve', response: 'Warmup' })
  @JobIdParam()
  @NotFoundResponse()
  getJobWarmup(@Caller() caller: Principal, @Param('id') id: string) {
    return this.warmups.get(caller, id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Operation({ id: 'cancelJob', summary: 'Cancel a job (a running one stops within seconds)', response: 'Job', description: 'A waiting or paused job is cancelled at once (200). For a running job the request is recorded, visible as `controlRequest` (202), and the job then ends `cancelled`, never `succeeded`; a cancel outranks a pending pause or preempt. A job that has ended is a 409 naming its state.' })
  @ControlAcceptedResponse()
  @JobIdParam()
  @NotFoundResponse()
  @ConflictResponse()
  async cancelJob(@Caller() caller: Principal, @Param('id') id: string, @Res({ passthrough: true }) res: Response) {
    return answerControl(await this.jobs.cancel(caller, id), res);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Operation({ id: 'pauseJob', summary: 'Pause a job (a running one checkpoints after its current step)', response: 'Job', description: 'A waiting job is paused at once (200). For a running job the request is recorded, visible as `controlRequest` (202): the job checkpoints after its current step (or leaves its warm-up within seconds) and pauses. A pending cancel is not replaced (409).' })
  @ControlAcceptedResponse()
  @JobIdParam()
  @NotFoundResponse()
  @ConflictResponse()
  async pauseJob(@Caller() caller: Principal, @Param('id') id: string, @Res({ passthrough: true }) res: Response) {
    return answerControl(await this.jobs.pause(caller, id), res);
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
  @HttpCode(202)
  @Operation({ id: 'preemptJob', summary: 'Admins: checkpoint a running job, requeue it, resume it later exactly', status: 202, response: 'Job', description: 'The request is recorded, visible as `controlRequest`, until the job has checkpointed and gone back to the queue. A pending cancel or pause is not replaced (409).' })
  @JobIdParam()
  @AdminJobActionResponse()
  @NotFoundResponse()
  @ConflictResponse()
  async preemptJob(@Caller() caller: Principal, @Param('id') id: string, @Res({ passthrough: true }) res: Response) {
    return answerControl(await this.jobs.preempt(caller, id), res);
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
    await writeEventStream(req, res, (signal) => this.results.follow(caller, id, BigInt(/^\d{1,18}$/.test(lastEventId ?? '') ? lastEventId! : 0), signal, req.headers.authorization));
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

/** 202 while the request waits for the running attempt to obey it (the job shows it as `controlRequest`), 200 when it took effect at once. */
function answerControl(answer: ControlAnswer, res: Response) {
  res.status(answer.pending ? 202 : 200);
  return answer.job;
}

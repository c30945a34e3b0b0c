import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateEvaluationSchema, ForkJobSchema, RollbackJobSchema } from '../contracts/checkpoint-actions.dto';
import type { Principal } from '../services/auth.service';
import { CheckpointActionsService } from '../services/checkpoint-actions.service';
import { EvaluationService } from '../services/evaluation.service';
import { Caller } from './auth.guard';
import { BadRequestResponse, ConflictResponse, JobIdParam, JsonBody, NotFoundResponse, Operation } from './openapi.decorators';
import { parseInput } from './validation';

const LOCATION = { Location: { description: 'where the new resource is read', required: true, schema: { type: 'string' as const } } };

/** Sets Location to the new resource and answers with it. */
function at<T extends { id: string }>(res: Response, path: (resource: T) => string, resource: T): T {
  res.setHeader('Location', path(resource));
  return resource;
}

@ApiTags('checkpoints')
@Controller('v1/jobs')
export class CheckpointActionsController {
  constructor(
    private readonly evaluations: EvaluationService,
    private readonly actions: CheckpointActionsService,
  ) {}

  @Post(':id/evaluations')
  @HttpCode(202)
  @Operation({
    id: 'createEvaluation',
    summary: 'Evaluate a checkpoint on an environment config (success and pass@k); a worker plays it: poll the evaluation',
    description: 'A config whose observations the checkpoint’s vocabulary or context cannot hold is a 400 that says why.',
    status: 202,
    response: 'Evaluation',
    headers: LOCATION,
  })
  @JobIdParam()
  @JsonBody('CreateEvaluation', undefined, true)
  @BadRequestResponse()
  @NotFoundResponse()
  @ConflictResponse()
  createEvaluation(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    return this.evaluations.request(caller, id, parseInput(CreateEvaluationSchema, body ?? {}, 'body')).then((e) => at(res, (r) => `/v1/jobs/${r.jobId}/evaluations/${r.id}`, e));
  }

  @Get(':id/evaluations')
  @Operation({ id: 'listEvaluations', summary: 'Evaluations of the job’s checkpoints, newest first', response: 'EvaluationList' })
  @JobIdParam()
  @NotFoundResponse()
  listEvaluations(@Caller() caller: Principal, @Param('id') id: string) {
    return this.evaluations.list(caller, id);
  }

  @Get(':id/evaluations/:evaluationId')
  @Operation({ id: 'getEvaluation', summary: 'One evaluation: queued, running, or its success, pass@k and sample transcripts', response: 'Evaluation' })
  @JobIdParam()
  @ApiParam({ name: 'evaluationId', description: 'evaluation id', schema: { type: 'string', format: 'uuid' } })
  @NotFoundResponse()
  getEvaluation(@Caller() caller: Principal, @Param('id') id: string, @Param('evaluationId') evaluationId: string) {
    return this.evaluations.get(caller, id, evaluationId);
  }

  @Post(':id/fork')
  @Operation({
    id: 'forkJob',
    summary: 'A new job from a checkpoint of this one, with overrides (a lower learning rate, more steps, …)',
    description: 'Overrides that would change the model’s shape or vocabulary are a 400 naming the field.',
    status: 201,
    response: 'Job',
    headers: LOCATION,
  })
  @JobIdParam()
  @JsonBody('ForkJob', undefined, true)
  @BadRequestResponse()
  @NotFoundResponse()
  @ConflictResponse()
  forkJob(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    return this.actions.fork(caller, id, parseInput(ForkJobSchema, body ?? {}, 'body')).then((job) => at(res, (j) => `/v1/jobs/${j.id}`, job));
  }

  @Post(':id/rollback')
  @HttpCode(200)
  @Operation({ id: 'rollbackJob', summary: 'Back to a chosen or the newest healthy checkpoint of a stopped job, and queued to train on from there', response: 'Job' })
  @JobIdParam()
  @JsonBody('RollbackJob', undefined, true)
  @BadRequestResponse()
  @NotFoundResponse()
  @ConflictResponse()
  rollbackJob(@Caller() caller: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.actions.rollback(caller, id, parseInput(RollbackJobSchema, body ?? {}, 'body'));
  }
}

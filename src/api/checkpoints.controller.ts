import { Controller, Get, Param, Res, StreamableFile } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Principal } from '../services/auth.service';
import { ResultsService } from '../services/results.service';
import { Caller } from './auth.guard';
import { NotFoundResponse, Operation } from './openapi.decorators';

@ApiTags('checkpoints')
@Controller('v1/checkpoints')
export class CheckpointsController {
  constructor(private readonly results: ResultsService) {}

  @Get(':id/download')
  @Operation({
    id: 'downloadCheckpoint', summary: 'Checkpoint bytes (weights, optimiser and RNG state, step)', contentType: 'application/octet-stream', response: 'CheckpointBytes',
    headers: { 'Content-Disposition': { description: 'attachment named `<job id>-step<step>.starlab-ckpt`', required: true, schema: { type: 'string', pattern: '^attachment; filename="[^"]+"$' } } },
  })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @NotFoundResponse()
  async downloadCheckpoint(@Caller() caller: Principal, @Param('id') id: string, @Res({ passthrough: true }) res: Response) {
    const { bytes, fileName } = await this.results.checkpointBytes(caller, id);
    res.set({ 'Content-Type': 'application/octet-stream', 'Content-Disposition': `attachment; filename="${fileName}"` });
    return new StreamableFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
}

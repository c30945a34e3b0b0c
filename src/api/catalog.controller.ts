import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CatalogService } from '../services/catalog.service';
import { Operation } from './openapi.decorators';

@ApiTags('catalog')
@Controller('v1')
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get('algorithms')
  @Operation({ id: 'listAlgorithms', summary: 'Algorithm presets with their config schema and values', response: 'AlgorithmList' })
  listAlgorithms() {
    return { data: this.catalog.listAlgorithms() };
  }
}

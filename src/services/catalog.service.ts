import { Injectable } from '@nestjs/common';
import type { AlgorithmView, EnvironmentView } from '../contracts/catalog.dto';
import { ALGORITHM_PRESETS, AlgorithmConfigSchema } from '../training/algorithms/presets';
import { listEnvironments } from '../training/envs/registry';
import { RECIPE_DESCRIPTION, RECIPES } from '../training/spec/recipes';
import { toJsonSchema } from './json-schema';

/** What can be trained: environments and algorithm presets with their schemas and defaults. */
@Injectable()
export class CatalogService {
  listEnvironments(): EnvironmentView[] {
    return listEnvironments().map((definition) => ({
      id: definition.id,
      description: definition.description,
      actions: [...definition.actionNames],
      symbols: { ...definition.create(definition.defaults).symbolLegend },
      hasExpert: Boolean(definition.expert),
      configSchema: toJsonSchema(definition.configSchema),
      defaults: { ...definition.defaults },
      rolloutDefaults: { ...(definition.rolloutDefaults ?? {}) },
      recipes: Object.fromEntries(Object.entries(RECIPES[definition.id] ?? {}).map(([kind, { where, ...spec }]) => [kind, { description: RECIPE_DESCRIPTION, spec, ...(where ? { where: { config: where.config, spec: where.recipe } } : {}) }])),
      server: null,
    }));
  }

  listAlgorithms(): AlgorithmView[] {
    return Object.entries(ALGORITHM_PRESETS).map(([id, preset]) => ({
      id,
      description: preset.description,
      config: { ...preset.config },
      configSchema: toJsonSchema(AlgorithmConfigSchema),
    }));
  }
}

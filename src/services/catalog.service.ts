import { Injectable } from '@nestjs/common';
import { ALGORITHM_PRESETS, AlgorithmConfigSchema } from '../training/algorithms/presets';
import { listEnvironments } from '../training/envs/registry';
import { toJsonSchema } from './json-schema';

export interface EnvironmentInfo {
  id: string;
  description: string;
  actions: string[];
  symbols: Record<string, string>;
  hasExpert: boolean;
  configSchema: Record<string, unknown>;
  defaults: Record<string, unknown>;
  rolloutDefaults: Record<string, unknown>;
}

export interface AlgorithmInfo {
  id: string;
  description: string;
  config: Record<string, unknown>;
  configSchema: Record<string, unknown>;
}

/** What can be trained: environments and algorithm presets with their schemas and defaults. */
@Injectable()
export class CatalogService {
  listEnvironments(): EnvironmentInfo[] {
    return listEnvironments().map((definition) => ({
      id: definition.id,
      description: definition.description,
      actions: [...definition.actionNames],
      symbols: { ...definition.create(definition.defaults).symbolLegend },
      hasExpert: Boolean(definition.expert),
      configSchema: toJsonSchema(definition.configSchema),
      defaults: { ...definition.defaults },
      rolloutDefaults: { ...(definition.rolloutDefaults ?? {}) },
    }));
  }

  listAlgorithms(): AlgorithmInfo[] {
    return Object.entries(ALGORITHM_PRESETS).map(([id, preset]) => ({
      id,
      description: preset.description,
      config: { ...preset.config },
      configSchema: toJsonSchema(AlgorithmConfigSchema),
    }));
  }
}

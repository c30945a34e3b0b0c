import { ALGORITHM_IDS } from '../training/algorithms/presets';
import { CatalogService } from './catalog.service';

describe('CatalogService.listAlgorithms', () => {
  const algorithms = new CatalogService().listAlgorithms();
  const byId = new Map(algorithms.map((a) => [a.id, a]));

  it('lists every preset, DAPO and GiGPO included, each saying where it follows the code', () => {
    expect(algorithms.map((a) => a.id)).toEqual(ALGORITHM_IDS);
    expect(ALGORITHM_IDS).toEqual(expect.arrayContaining(['dapo', 'gigpo']));
    for (const id of ['dapo', 'gigpo']) expect(byId.get(id)!.description).toMatch(/code/);
    expect(byId.get('dapo')!.config).toMatchObject({ dynamicSampling: true, clipHigh: 0.28, lossAggregation: 'token-mean', klCoef: 0 });
    expect(byId.get('gigpo')!.config).toMatchObject({ advantage: 'gigpo', gigpoStepWeight: 1, gigpoGamma: 0.95 });
  });

  it("offers AEPO's loss and advantage knobs in the config schema", () => {
    const properties = (byId.get('starpo-ppo')!.configSchema as { properties: Record<string, { anyOf?: { const: string }[] }> }).properties;
    expect(properties.clipMode.anyOf!.map((o) => o.const)).toEqual(['ppo', 'aepo']);
    expect(properties.entropyAdvantageAlpha).toBeDefined();
    expect(properties.advantage.anyOf!.map((o) => o.const)).toEqual(['gae', 'grpo', 'gigpo']);
  });
});

import { useTestBackend } from '../../test/support/tf';
import { getEnvDefinition } from './envs/registry';
import { METRIC, type Metrics } from './signals/step-metrics';
import { parseJobSpec } from './spec/validate';
import { Trainer } from './trainer';

describe('Trainer: tool metrics', () => {
  beforeAll(useTestBackend);

  it('reports tool calls per episode and their success rate every step of a lookup-qa job, and only there', async () => {
    const spec = parseJobSpec({
      environment: { id: 'lookup-qa' },
      algorithm: { id: 'starpo-grpo' },
      model: { config: { layers: 1, dModel: 16, heads: 2 } },
      rollout: { groups: 2, groupSize: 2 },
      training: { steps: 2, evalEvery: 0, evalEpisodes: 2, checkpointEvery: 0, warmup: { steps: 2, batchSize: 8 } },
    });
    const trainer = await Trainer.create(spec);
    const steps: Metrics[] = [];
    await trainer.run({ onStep: (step, metrics) => void (step > 0 && steps.push(metrics)) });
    trainer.dispose();
    expect(steps).toHaveLength(2);
    for (const metrics of steps) {
      // lookup-qa executes only tool calls (any other text is an invalid action), so calls are actions.
      expect(metrics[METRIC.toolCallsPerEpisode]).toBeCloseTo(metrics[METRIC.episodeActions], 12);
      expect(metrics[METRIC.toolSuccessRate]).toBeGreaterThanOrEqual(0);
      expect(metrics[METRIC.toolSuccessRate]).toBeLessThanOrEqual(1);
    }
    expect(getEnvDefinition('frozenlake').toolCalls).toBeUndefined();
  }, 120_000);
});

/**
 * Parity: FrozenLake served over the StarLab protocol by another process, and the built-in
 * FrozenLake, give the same job the same warm-up, trajectories, step metrics, evaluations and
 * checkpoints, step for step. The built-in side plays the in-process `FrozenLakeEnv` under the
 * served definition's vocabulary (an open one, as every served environment has), so the only
 * difference between the two runs is where the game runs. Then the served job's checkpoint
 * resumes on the same manifest and is refused on another.
 */
import { connectServedEnvironment } from '../../src/repositories/env-servers';
import { ManifestChangedError } from '../../src/training/checkpoint';
import { getEnvDefinition } from '../../src/training/envs/registry';
import type { EnvDefinition } from '../../src/training/envs/types';
import type { TrajectoryRecord } from '../../src/training/records';
import type { Metrics } from '../../src/training/signals/step-metrics';
import { parseJobSpec } from '../../src/training/spec/validate';
import { Trainer } from '../../src/training/trainer';
import { ProtocolServer, startProtocolServer } from '../support/protocol-server';

const TIMINGS = /^(perf\/|warmup\/ms)/;

async function run(definition: EnvDefinition, resumeFrom?: Uint8Array) {
  const spec = parseJobSpec(
    {
      environment: { id: definition.id },
      algorithm: { id: 'starpo-s' },
      rollout: { groups: 2, groupSize: 4 },
      training: { steps: 3, seed: 5, evalEvery: 1, evalEpisodes: 8, checkpointEvery: 1, warmup: { steps: 4 } },
    },
    definition,
  );
  const trainer = await Trainer.create(spec, { backend: 'wasm', environment: definition, resumeFrom });
  const steps: { step: number; metrics: Metrics }[] = [];
  const trajectories: TrajectoryRecord[][] = [];
  const checkpoints: Uint8Array[] = [];
  await trainer.run({
    onStep: (step, metrics) => void steps.push({ step, metrics: Object.fromEntries(Object.entries(metrics).filter(([name]) => !TIMINGS.test(name))) }),
    onTrajectories: (_step, records) => void trajectories.push(records),
    onCheckpoint: (_step, bytes) => void checkpoints.push(bytes),
  });
  trainer.dispose();
  return { steps, trajectories, checkpoints };
}

describe('FrozenLake over the protocol and built in', () => {
  let server: ProtocolServer;
  let served: Awaited<ReturnType<typeof connectServedEnvironment>>;
  beforeAll(async () => {
    server = await startProtocolServer();
    served = await connectServedEnvironment('lake', { url: server.url, protocol: 'starlab' });
  });
  afterAll(async () => {
    served.dispose();
    await server.stop();
  });

  it('train the same job to the same results, step for step, and a checkpoint resumes only on the same manifest', async () => {
    // The protocol serves an expert's plan, not the built-in's turn expert: the built-in side's
    // demonstrations spread the plan over the turns as the served side's do.
    const builtIn: EnvDefinition = { ...getEnvDefinition('frozenlake'), turnExpert: undefined, id: 'lake', served: served.definition.served };
    const overProtocol = await run(served.definition);
    const inProcess = await run(builtIn);
    expect(overProtocol.steps.map((s) => s.step)).toEqual([0, 1, 2, 3]);
    expect(overProtocol.steps).toEqual(inProcess.steps);
    expect(overProtocol.trajectories).toEqual(inProcess.trajectories);
    expect(overProtocol.trajectories.flat().length).toBe(3 * 2 * 4);
    expect(Buffer.from(overProtocol.checkpoints.at(-1)!).equals(Buffer.from(inProcess.checkpoints.at(-1)!))).toBe(true);
    expect((await server.counts()).open).toBe(0);

    // Resuming from step 1's checkpoint retrains steps 2 and 3 as they were.
    const resumed = await run(served.definition, overProtocol.checkpoints[1]);
    expect(resumed.steps).toEqual(overProtocol.steps.slice(2));

    const drifted: EnvDefinition = { ...served.definition, served: { ...served.definition.served!, digest: 'f'.repeat(64) } };
    await expect(run(drifted, overProtocol.checkpoints[1])).rejects.toThrow(ManifestChangedError);
    await expect(run(drifted, overProtocol.checkpoints[1])).rejects.toThrow(/environment 'lake' now serves another manifest/);
  }, 300_000);
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/config';
import type { EvaluationRepository, EvaluationRow } from '../repositories/evaluation.repository';
import type { JobRepository } from '../repositories/job.repository';
import type { EnvironmentServerRepository } from '../repositories/environment-server.repository';
import { ProcessRepository } from '../repositories/process.repository';
import { EvaluationRunnerService } from './evaluation-runner.service';

const FIXTURES = join(__dirname, '../../test/fixtures');
const spec = JSON.parse(readFileSync(join(FIXTURES, 'v1-frozenlake.spec.json'), 'utf8'));
const checkpoint = new Uint8Array(readFileSync(join(FIXTURES, 'v1-frozenlake-step2.ckpt')));
const config = (evaluationTimeoutMs = 60_000) => ({ worker: { name: 'w1', backend: 'wasm', controlPollMs: 10, evaluationTimeoutMs }, scheduling: { workerStaleMs: 20_000 } }) as unknown as AppConfig;
const evaluation = { id: 'e1', jobId: 'j1', checkpointId: 'c1', step: 2, environment: { id: 'frozenlake', config: { slippery: true } }, episodes: 2, k: 2, temperature: 1 } as unknown as EvaluationRow;

/** The worker side of an evaluation, with its repositories mocked and the real child process. */
describe('EvaluationRunnerService', () => {
  async function runner(bytes: Uint8Array | null, timeoutMs?: number, claimedEvaluation = evaluation): Promise<Record<string, unknown>> {
    let claimed = false;
    let stored: (outcome: Record<string, unknown>) => void = () => undefined;
    const finished = new Promise<Record<string, unknown>>((resolve) => (stored = resolve));
    const evaluations = {
      expire: jest.fn(async () => 0),
      claim: jest.fn(async () => (claimed ? null : ((claimed = true), claimedEvaluation))),
      checkpointBytes: jest.fn(async () => (bytes ? { bytes } : null)),
      finish: jest.fn(async (_id: string, _worker: string, outcome: Record<string, unknown>) => (stored(outcome), true)),
    } as unknown as EvaluationRepository;
    const jobs = { findById: jest.fn(async () => ({ id: 'j1', spec })) } as unknown as JobRepository;
    const environments = { registrationFor: jest.fn(async () => null), registrationOrGone: jest.fn(async () => null) } as unknown as EnvironmentServerRepository;
    const service = new EvaluationRunnerService(evaluations, jobs, new ProcessRepository(), config(timeoutMs), environments);
    service.start();
    try {
      return await finished;
    } finally {
      service.stop();
    }
  }

  it('plays a claimed evaluation in a child process and stores success, pass@k and the transcripts', async () => {
    const outcome = (await runner(checkpoint)) as { status: string; success: number; passAtK: number; result: { samples: string[]; durationMs: number } };
    expect(outcome).toMatchObject({ status: 'succeeded', result: { samples: [expect.stringMatching(/^--- turn 1 ---/), expect.stringMatching(/^--- turn 1 ---/)] } });
    // Rates of 2 seeds × 2 samples: multiples of 1/4 (NaN fails these), pass@2 at least the success rate.
    for (const rate of [outcome.success, outcome.passAtK]) expect([0, 0.25, 0.5, 0.75, 1]).toContain(rate);
    expect(outcome.passAtK).toBeGreaterThanOrEqual(outcome.success);
    expect(outcome.result.durationMs).toBeGreaterThan(0);
  }, 30_000);

  it('fails it, saying why, when retention deleted the checkpoint or the child cannot read it', async () => {
    expect(await runner(null)).toEqual({ status: 'failed', error: 'the checkpoint at step 2 no longer exists (checkpoint retention deleted it)' });
    const broken = await runner(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
    expect(broken).toEqual({ status: 'failed', error: 'not a StarLab checkpoint' });
  }, 30_000);

  it('kills a child that has not answered within the timeout, and fails the evaluation saying so', async () => {
    // 50,000 × 2 episodes take minutes: the child is still playing when the 1 s timeout kills it.
    expect(await runner(checkpoint, 1000, { ...evaluation, episodes: 50_000 } as EvaluationRow)).toEqual({ status: 'failed', error: 'timed out after 1 s (STARLAB_EVALUATION_TIMEOUT_MS)' });
  }, 30_000);
});

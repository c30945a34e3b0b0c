import type { BackendChoice } from '../training/backend';
import type { CheckpointEvaluation, CheckpointEvaluationRequest, PlaySettings } from '../training/checkpoint-evaluation';
import type { ServedAddress } from './training-protocol';

/**
 * Messages between a worker and the child process that plays one evaluation. It runs in its own
 * process for the reason training does (training-protocol.ts): the worker's event loop keeps
 * renewing queue locks and heart-beating while the policy plays.
 */
export interface EvaluationTask {
  backend: BackendChoice;
  checkpoint: Uint8Array;
  settings: PlaySettings;
  request: CheckpointEvaluationRequest;
  /** The registered environment the request names, which the child connects to itself; null for a built-in. */
  served: ServedAddress | null;
}

export type EvaluationAnswer = { type: 'result'; result: CheckpointEvaluation; durationMs: number } | { type: 'failed'; error: string };

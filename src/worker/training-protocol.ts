import type { BackendChoice } from '../training/backend';
import type { TrajectoryRecord } from '../training/records';
import type { CheckpointHealth, CollapseWarning } from '../training/signals/collapse';
import type { Metrics } from '../training/signals/step-metrics';
import type { EnvServerAddress } from '../training/envs/remote/address';
import type { JobSpec } from '../training/spec/validate';

/**
 * Messages between a worker and the child process that trains one job. Training runs in its
 * own process so that the worker's event loop (queue lock renewal, control polling, database
 * writes) never waits on a training step, and so that cancel can stop it at once.
 *
 * Every report from the child carries a sequence number and waits for the parent's ack: the
 * child never runs ahead of what has been persisted.
 */
export type ParentMessage =
  | { type: 'start'; spec: JobSpec; backend: BackendChoice; checkpoint: Uint8Array | null; warmupCache: WarmupCacheSettings | null; served: ServedAddress | null }
  | { type: 'ack'; seq: number }
  /** Finish the current step, checkpoint, and exit (pause, preempt, shutdown). */
  | { type: 'stop' };

/** A registered environment the child connects to itself: its id, address and the manifest digest it was registered with. */
export interface ServedAddress {
  id: string;
  address: EnvServerAddress;
  digest: string;
}

/** The worker's warm-up cache (STARLAB_WARMUP_CACHE_DIR): a local folder and how many warm-ups it keeps. */
export interface WarmupCacheSettings {
  dir: string;
  entries: number;
}

export type ChildReport =
  | { type: 'started'; backend: string; fromStep: number; parameters: number }
  | { type: 'step'; step: number; metrics: Metrics; trajectories: TrajectoryRecord[] }
  | { type: 'warnings'; step: number; warnings: CollapseWarning[] }
  | { type: 'checkpoint'; step: number; bytes: Uint8Array; health: CheckpointHealth }
  | { type: 'log'; message: string }
  | { type: 'finished'; status: 'completed' | 'stopped'; step: number }
  | { type: 'failed'; error: string };

export type ChildMessage = ChildReport & { seq: number };

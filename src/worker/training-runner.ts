import { ChildProcess, fork } from 'node:child_process';
import { extname, join } from 'node:path';
import type { BackendChoice } from '../training/backend';
import type { TrajectoryRecord } from '../training/records';
import type { CheckpointHealth, CollapseWarning } from '../training/signals/collapse';
import type { Metrics } from '../training/signals/step-metrics';
import type { JobSpec } from '../training/spec/validate';
import type { ChildMessage, ParentMessage } from './training-protocol';

/** Where a running job's results go; each method resolves once the result is durable. */
export interface TrainingSink {
  started(info: { backend: string; fromStep: number; parameters: number }): Promise<void>;
  step(step: number, metrics: Metrics, trajectories: TrajectoryRecord[]): Promise<void>;
  warnings(step: number, warnings: CollapseWarning[]): Promise<void>;
  checkpoint(step: number, bytes: Uint8Array, health: CheckpointHealth): Promise<void>;
  log(message: string): Promise<void>;
}

export type TrainingOutcome =
  | { status: 'completed' | 'stopped'; step: number }
  | { status: 'killed' }
  | { status: 'failed'; error: string };

/**
 * Parent side of one training child process: relays its reports to the sink in order, acks
 * each one only after the sink has persisted it, and can stop it gracefully (checkpoint first)
 * or kill it outright (cancel).
 */
export class TrainingProcess {
  readonly outcome: Promise<TrainingOutcome>;
  private readonly child: ChildProcess;
  private chain: Promise<void> = Promise.resolve();
  private result: TrainingOutcome | null = null;
  private killed = false;

  constructor(spec: JobSpec, backend: BackendChoice, checkpoint: Uint8Array | null, private readonly sink: TrainingSink) {
    const entry = join(__dirname, `training-process${extname(__filename)}`);
    // Running from TypeScript sources (tests, `npm run worker:dev`): register the same transpiler.
    const execArgv = extname(__filename) === '.ts' ? ['-r', '@swc-node/register'] : [];
    this.child = fork(entry, [], { serialization: 'advanced', execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: ChildMessage) => {
      this.chain = this.chain.then(() => this.handle(message));
    });
    this.outcome = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        void this.chain.then(() => {
          if (this.killed) resolve({ status: 'killed' });
          else resolve(this.result ?? { status: 'failed', error: `training process exited (${signal ?? `code ${code}`})` });
        });
      });
    });
    this.post({ type: 'start', spec, backend, checkpoint });
  }

  /** Finish the current step, checkpoint and exit. */
  stop(): void {
    this.post({ type: 'stop' });
  }

  /** Immediate: nothing after the last persisted report is kept. */
  kill(): void {
    this.killed = true;
    this.child.kill('SIGKILL');
  }

  private async handle(message: ChildMessage): Promise<void> {
    if (this.killed) return;
    switch (message.type) {
      case 'started':
        await this.sink.started({ backend: message.backend, fromStep: message.fromStep, parameters: message.parameters });
        break;
      case 'step':
        await this.sink.step(message.step, message.metrics, message.trajectories);
        break;
      case 'warnings':
        await this.sink.warnings(message.step, message.warnings);
        break;
      case 'checkpoint':
        await this.sink.checkpoint(message.step, message.bytes, message.health);
        break;
      case 'log':
        await this.sink.log(message.message);
        break;
      case 'finished':
        this.result = { status: message.status, step: message.step };
        break;
      case 'failed':
        this.result = { status: 'failed', error: message.error };
        break;
    }
    this.post({ type: 'ack', seq: message.seq });
  }

  private post(message: ParentMessage): void {
    if (this.child.connected) this.child.send(message);
  }
}

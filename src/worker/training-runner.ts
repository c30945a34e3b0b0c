import type { ChildProcess } from 'node:child_process';
import { extname, join } from 'node:path';
import type { ProcessRepository } from '../repositories/process.repository';
import type { BackendChoice } from '../training/backend';
import type { TrajectoryRecord } from '../training/records';
import type { CheckpointHealth, CollapseWarning } from '../training/signals/collapse';
import type { Metrics } from '../training/signals/step-metrics';
import type { JobSpec } from '../training/spec/validate';
import type { ChildMessage, ParentMessage, ServedAddress, WarmupCacheSettings } from './training-protocol';

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
  | { status: 'failed'; error: string }
  /** The sink could not store a report (it gave up retrying): the child was stopped at once. */
  | { status: 'write-failed'; error: string };

export interface TrainingProcessOptions {
  /** The Node binary that runs the child (default: this process's). */
  execPath?: string;
  /** Where the child looks for and keeps finished warm-ups (none: it trains its own). */
  warmupCache?: WarmupCacheSettings | null;
  /** The registered environment the job trains on (none: a built-in). */
  served?: ServedAddress | null;
}

/**
 * Parent side of one training child process: relays its reports to the sink in order, acks
 * each one only after the sink has persisted it, and can stop it gracefully (checkpoint first)
 * or kill it outright (cancel). `outcome` always settles: when the child exits, when it could not
 * be started, and when the sink fails (the child is killed then, since it would wait for the ack
 * for ever).
 */
export class TrainingProcess {
  readonly outcome: Promise<TrainingOutcome>;
  private readonly child: ChildProcess;
  private chain: Promise<void> = Promise.resolve();
  private result: TrainingOutcome | null = null;
  private killed = false;
  private writeFailure: string | null = null;
  private startFailure: string | null = null;

  constructor(processes: ProcessRepository, spec: JobSpec, backend: BackendChoice, checkpoint: Uint8Array | null, private readonly sink: TrainingSink, options: TrainingProcessOptions = {}) {
    this.child = processes.start(join(__dirname, `training-process${extname(__filename)}`), { execPath: options.execPath });
    let ended: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
    this.outcome = new Promise((resolve) => {
      ended = (code, signal) => void this.chain.then(() => resolve(this.settled(code, signal)));
    });
    // 'error': the child could not be started (no 'exit' follows), or a message could not be
    // sent to it (it is exiting: 'exit' follows). Without a listener either would throw.
    this.child.on('error', (error) => {
      if (this.child.pid !== undefined) return;
      this.startFailure ??= error.message;
      // The IPC channel of a child that never ran would keep this process alive.
      if (this.child.connected) this.child.disconnect();
      ended(null, null);
    });
    this.child.on('message', (message: ChildMessage) => {
      this.chain = this.chain.then(() => this.handle(message));
    });
    this.child.on('exit', (code, signal) => ended(code, signal));
    this.post({ type: 'start', spec, backend, checkpoint, warmupCache: options.warmupCache ?? null, served: options.served ?? null });
  }

  /** The child's process id (undefined when it could not be started). */
  get pid(): number | undefined {
    return this.child.pid;
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

  private settled(code: number | null, signal: NodeJS.Signals | null): TrainingOutcome {
    if (this.writeFailure !== null) return { status: 'write-failed', error: this.writeFailure };
    if (this.killed) return { status: 'killed' };
    if (this.startFailure !== null) return { status: 'failed', error: `training process could not start: ${this.startFailure}` };
    return this.result ?? { status: 'failed', error: `training process exited (${signal ?? `code ${code}`})` };
  }

  /** Never rejects: a report the sink could not store ends the run (see `outcome`). */
  private async handle(message: ChildMessage): Promise<void> {
    if (this.killed) return;
    try {
      await this.relay(message);
    } catch (error) {
      if (this.killed) return; // cancelled meanwhile: what was not stored is not wanted
      // On one line: a job's error is read as one, and Prisma's messages span several ("Invalid `prisma.$executeRaw()` invocation: …").
      this.writeFailure = `could not store ${describe(message)}: ${(error as Error).message.replace(/\s+/g, ' ').trim()}`;
      this.kill();
      return;
    }
    this.post({ type: 'ack', seq: message.seq });
  }

  private async relay(message: ChildMessage): Promise<void> {
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
  }

  private post(message: ParentMessage): void {
    if (this.child.connected) this.child.send(message);
  }
}

/** What a report is, for an error message. */
function describe(message: ChildMessage): string {
  switch (message.type) {
    case 'step':
      return `step ${message.step}`;
    case 'warnings':
    case 'checkpoint':
      return `the ${message.type === 'warnings' ? 'warnings' : 'checkpoint'} of step ${message.step}`;
    case 'started':
      return 'the start of training';
    default:
      return `a ${message.type} report`;
  }
}

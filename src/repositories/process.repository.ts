import { Injectable } from '@nestjs/common';
import { ChildProcess, fork } from 'node:child_process';
import { childExecArgv } from './typescript-child';

export interface ChildOptions {
  /** The Node binary that runs the child (default: this process's). */
  execPath?: string;
}

/**
 * The one owner of child processes: the worker trains each job and plays each evaluation in a
 * child of its own (src/worker/training-process.ts, evaluation-process.ts), so its event loop
 * keeps renewing queue locks, heart-beating and polling for controls while a step computes.
 * A child has an IPC channel with structured-clone messages and shares this process's output;
 * when this process is itself run from the TypeScript sources (tests, `npm run worker:dev`) the
 * child runs under the same transpiler.
 */
@Injectable()
export class ProcessRepository {
  /** Starts the module at `entry` (an absolute path, .ts or .js) as a child. */
  start(entry: string, options: ChildOptions = {}): ChildProcess {
    return fork(entry, [], { serialization: 'advanced', execArgv: childExecArgv(entry), execPath: options.execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }

  /** Whether a process with this id still exists (signal 0 checks without sending anything). */
  exists(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}

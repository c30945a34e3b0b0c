import type { EnvServerAddress } from '../training/envs/remote/address';
import { Injectable } from '@nestjs/common';
import { fork } from 'node:child_process';
import { extname, join } from 'node:path';
import type { References } from '../training/experiment/baselines';
import type { JobSpec } from '../training/spec/validate';
import { childExecArgv } from './typescript-child';

/** A registered environment's id, address and registered manifest digest. */
export interface ServedReferenceAddress {
  id: string;
  address: EnvServerAddress;
  digest: string;
}

export type ReferencesAnswer = { type: 'result'; references: References[] } | { type: 'failed'; error: string };

/** A computation that has not answered by then is stopped: a job spec's bounds keep it to seconds. */
const TIMEOUT_MS = 120_000;

/**
 * Plays the references of results cells (src/training/experiment/baselines.ts) in a child
 * process: the random agent's passes and FrozenLake's dynamic programming take up to a few
 * hundred milliseconds a cell, which the API's event loop must not spend.
 */
@Injectable()
export class ReferencesRepository {
  /** `served`: the registered environment the specs name, which the child connects to itself. */
  compute(specs: JobSpec[], served?: ServedReferenceAddress): Promise<References[]> {
    const entry = join(__dirname, `references-process${extname(__filename)}`);
    const child = fork(entry, [], { serialization: 'advanced', execArgv: childExecArgv(entry), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      let answer: ReferencesAnswer | null = null;
      const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
      child.on('message', (message: ReferencesAnswer) => (answer = message));
      child.on('error', (error) => (answer ??= { type: 'failed', error: error.message }));
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (answer?.type === 'result') resolve(answer.references);
        else reject(new Error(answer?.error ?? `references process exited (${signal ?? `code ${code}`})`));
      });
      child.send({ specs, served: served ?? null });
    });
  }
}

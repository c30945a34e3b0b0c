/**
 * The environment server of a row that is served by another process (learning-table.ts
 * SERVED_ROWS): started before the row's runs, stopped after them, so every run's child process
 * talks to the same server over HTTP as a worker would.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { servedEnvironmentOf } from '../src/cli/served-environment';
import type { EnvDefinition } from '../src/training/envs/types';
import { parseJobSpec } from '../src/training/spec/validate';
import { expertSuccess } from '../src/training/experiment/baselines';
import type { Row } from './learning-table';

const ROOT = join(__dirname, '..');
const START_TIMEOUT_MS = 30_000;

/** Starts `row.serve` and resolves once it prints where it listens; the returned function stops it. */
export function startServed(row: Row): Promise<() => Promise<void>> {
  const [program, ...args] = row.serve!;
  const child = spawn(program, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`${row.name}: the server did not listen within ${START_TIMEOUT_MS} ms:\n${output}`))), START_TIMEOUT_MS);
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (!/listening on /.test(output)) return;
      clearTimeout(timer);
      console.log(`${row.name}: ${output.trim()} (${row.serve!.join(' ')})`);
      resolve(async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      });
    });
    exited.then((code) => (clearTimeout(timer), reject(new Error(`${row.name}: the server exited (${code}) before it listened; is ${String(row.envConfig.url)} taken?\n${output}`))));
  });
}

/** Connects to the server a spec names (`{"id": "http", "config": {"url"}}`): its definition, and the spec as it is trained. */
export async function connectServed(rawSpec: Record<string, unknown>): Promise<{ spec: Record<string, unknown>; definition: EnvDefinition; dispose: () => void }> {
  const served = await servedEnvironmentOf(rawSpec);
  if (!served) throw new Error(`${JSON.stringify(rawSpec.environment)} is not a served environment`);
  return { ...served, spec: served.spec as Record<string, unknown> };
}

/** The server's expert on the run's evaluation seeds within its budgets (src/training/experiment/baselines.ts). */
export function servedExpert(rawSpec: Record<string, unknown>, definition: EnvDefinition): Promise<number | null> {
  return expertSuccess(parseJobSpec(rawSpec, definition), definition);
}

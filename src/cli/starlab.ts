/**
 * `starlab`: the command-line client of a StarLab service.
 *
 * Configured by STARLAB_URL (default http://localhost:3000) and STARLAB_API_KEY, or --url/--key.
 * Exit status: 0 done (for watch: the job succeeded), 1 an API or network error or a job that
 * failed or was cancelled, 2 a usage error.
 */
import { parseArgs, ParseArgsConfig } from 'node:util';
import { ApiClient, ApiError } from './client/api-client';
import { Io, UsageError, archive, control, downloadCheckpoint, list, metricsCsv, resolveJobId, show, submit } from './client/jobs';
import { evaluateRemotely, fork, overridesOf, rollback } from './client/checkpoint-commands';
import { archiveExperiment, controlExperiment, listExperiments, resolveExperimentId, showExperiment, submitExperiment } from './client/experiments';
import { webhooks } from './client/webhooks';
import { createKey, listKeys, revokeKey } from './client/keys';
import { watch } from './client/watch';
import { checkEnvironmentServer } from './client/env-check';

const USAGE = `usage: starlab <command> [arguments] [--url URL] [--key KEY] [--json]

  submit <spec.json|spec.yaml|->  submit a job spec
        [--idempotency-key K] [--watch] [--quiet: print only the job id]
  list                            your jobs (admins: everyone's), with their phase (warm-up or RL step) and ETA
        [--status S] [--owner O] [--label k=v] [--environment E] [--name TEXT]
        [--archived] [--limit N] [--after CURSOR]
  show <job>                      status, warm-up, progress, warnings, checkpoints
  watch <job>                     live progress bar (the warm-up's, then RL's); warnings as they fire
  cancel | pause | resume <job>   lifecycle control
  archive <job> [--purge]         hide an ended job from lists; --purge deletes its results and checkpoints
  fork <job>                      a new job from a checkpoint (the latest, or --step N)
        [--step N] [--name N] [--set path=value ...] [--overrides JSON] [--watch] [--quiet]
  rollback <job>                  a stopped job back to its newest healthy checkpoint (or --step N),
        [--step N] [--learning-rate X]                            queued to train on from there
  evaluate <job>                  a worker plays a checkpoint (the latest, or --step N): success, pass@k
        [--step N] [--env ID] [--env-config JSON] [--episodes N] [--k K] [--temperature T] [--no-wait]
  experiment submit <file>        a base spec × a grid ({name, base, grid}, JSON or YAML), as one unit
        [--idempotency-key K] [--quiet]
  experiment show | cancel | pause | resume <experiment>      its table (per cell: seeds' mean, min–max)
  experiment list [--archived]  ·  experiment archive <experiment> [--purge]
  webhooks list | create --endpoint URL [--events a,b] | test <id> | deliveries <id> | delete <id>
  metrics <job>                   step metrics as CSV
        [--names a,b] [--from N] [--to N] [--out file.csv]
  download <job>                  save a checkpoint (the latest by default)
        [--step N] [--out file]
  evaluate --checkpoint FILE      play a downloaded checkpoint here (no service needed):
        [--env ID] [--env-config JSON] [--spec job.json|yaml]      success and pass@k
        [--episodes N] [--k K] [--temperature T]
  env check <url>                 run an environment server through the StarLab protocol (no service
        [--timeout-ms N]                                          needed): what is wrong, in words
  keys list | keys create --name N | keys revoke <key id>      [--user U]
  whoami                          who the key belongs to

<job> is a job id or its first characters (at least 4) for one of your recent jobs;
<experiment> likewise.
Environment: STARLAB_URL (default http://localhost:3000), STARLAB_API_KEY.
Exit status: 0 done (watch: the job succeeded), 1 API error or the job failed
or was cancelled, 2 usage error.`;

type Options = NonNullable<ParseArgsConfig['options']>;
const GLOBAL: Options = { url: { type: 'string' }, key: { type: 'string' }, help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } };
const COMMAND_OPTIONS: Record<string, Options> = {
  submit: { 'idempotency-key': { type: 'string' }, watch: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' } },
  list: { status: { type: 'string' }, owner: { type: 'string' }, label: { type: 'string' }, environment: { type: 'string' }, name: { type: 'string' }, archived: { type: 'boolean' }, limit: { type: 'string' }, after: { type: 'string' } },
  show: {},
  watch: {},
  cancel: {},
  pause: {},
  resume: {},
  metrics: { names: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string', short: 'o' } },
  download: { step: { type: 'string' }, out: { type: 'string', short: 'o' } },
  evaluate: { checkpoint: { type: 'string' }, env: { type: 'string' }, 'env-config': { type: 'string' }, spec: { type: 'string' }, episodes: { type: 'string' }, k: { type: 'string' }, temperature: { type: 'string' }, step: { type: 'string' }, 'no-wait': { type: 'boolean' } },
  archive: { purge: { type: 'boolean' } },
  fork: { step: { type: 'string' }, name: { type: 'string' }, set: { type: 'string', multiple: true }, overrides: { type: 'string' }, watch: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' } },
  rollback: { step: { type: 'string' }, 'learning-rate': { type: 'string' } },
  experiment: { 'idempotency-key': { type: 'string' }, quiet: { type: 'boolean', short: 'q' }, archived: { type: 'boolean' }, purge: { type: 'boolean' } },
  webhooks: { endpoint: { type: 'string' }, events: { type: 'string' } },
  keys: { user: { type: 'string' }, name: { type: 'string' } },
  whoami: {},
  env: { 'timeout-ms': { type: 'string' } },
};

const io: Io = { out: (text) => process.stdout.write(`${text}\n`), err: (text) => process.stderr.write(`${text}\n`) };

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one ${what}`);
  return positionals[0];
}

function decimal(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?(e-?\d+)?$/i.test(value)) throw new UsageError(`--${name} must be a number`);
  return Number(value);
}

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,6}$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

async function run(argv: string[], signal: AbortSignal): Promise<number> {
  const command = argv[0];
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return command ? 0 : 2;
  }
  if (!(command in COMMAND_OPTIONS)) throw new UsageError(`unknown command ${command}`);
  let parsed;
  try {
    parsed = parseArgs({ args: argv.slice(1), options: { ...GLOBAL, ...COMMAND_OPTIONS[command] }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (command === 'evaluate' && (values.checkpoint !== undefined || positionals.length === 0)) return evaluateCommand(values);
  if (command === 'env') {
    if (positionals[0] !== 'check' || positionals.length !== 2) throw new UsageError('usage: starlab env check <url>');
    return checkEnvironmentServer(positionals[1], io, { timeoutMs: integer(values['timeout-ms'] as string | undefined, 'timeout-ms') });
  }
  const url = (values.url as string | undefined) ?? process.env.STARLAB_URL ?? 'http://localhost:3000';
  const key = (values.key as string | undefined) ?? process.env.STARLAB_API_KEY;
  if (!key) throw new UsageError('no API key: set STARLAB_API_KEY or pass --key');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url / STARLAB_URL is not a URL: ${url}`);
  }
  const client = new ApiClient(url, key);
  const json = values.json === true;
  const str = (name: string) => values[name] as string | undefined;
  const job = async () => resolveJobId(client, one(positionals, 'job id'));

  switch (command) {
    case 'submit': {
      const submitted = await submit(client, io, one(positionals, 'spec file'), { idempotencyKey: str('idempotency-key'), quiet: values.quiet === true, json });
      return values.watch ? exitOf(await watch(client, io, submitted.id, signal)) : 0;
    }
    case 'list':
      integer(str('limit'), 'limit');
      await list(client, io, { status: str('status'), owner: str('owner'), label: str('label'), environment: str('environment'), q: str('name'), archived: values.archived ? 'true' : undefined, limit: str('limit'), after: str('after') }, json);
      return 0;
    case 'show':
      await show(client, io, await job(), json);
      return 0;
    case 'watch':
      return exitOf(await watch(client, io, await job(), signal));
    case 'cancel':
    case 'pause':
    case 'resume':
      await control(client, io, await job(), command);
      return 0;
    case 'metrics':
      integer(str('from'), 'from');
      integer(str('to'), 'to');
      await metricsCsv(client, io, await job(), { names: str('names'), from: str('from'), to: str('to') }, str('out'));
      return 0;
    case 'download':
      await downloadCheckpoint(client, io, await job(), { step: integer(str('step'), 'step'), out: str('out') });
      return 0;
    case 'archive':
      await archive(client, io, await job(), values.purge === true);
      return 0;
    case 'fork': {
      const forked = await fork(client, io, await job(), { step: integer(str('step'), 'step'), name: str('name'), overrides: overridesOf((values.set as unknown as string[] | undefined) ?? [], str('overrides')), quiet: values.quiet === true, json });
      return values.watch ? exitOf(await watch(client, io, forked.id, signal)) : 0;
    }
    case 'rollback':
      await rollback(client, io, await job(), { step: integer(str('step'), 'step'), learningRate: decimal(str('learning-rate'), 'learning-rate'), json });
      return 0;
    case 'evaluate':
      return evaluateRemotely(
        client,
        io,
        await job(),
        { step: integer(str('step'), 'step'), env: str('env'), envConfig: str('env-config'), episodes: integer(str('episodes'), 'episodes'), k: integer(str('k'), 'k'), temperature: decimal(str('temperature'), 'temperature'), wait: values['no-wait'] !== true, json },
        signal,
      );
    case 'experiment':
      return experiment(client, positionals, values, json);
    case 'webhooks':
      await webhooks(client, io, positionals, { endpoint: str('endpoint'), events: str('events'), json });
      return 0;
    case 'keys':
      return keys(client, positionals, values, json);
    case 'whoami': {
      const me = await client.get<{ id: string; name: string; role: string }>('/v1/users/me');
      io.out(json ? JSON.stringify(me, null, 2) : `${me.name} (${me.role}, ${me.id}) at ${url}`);
      return 0;
    }
  }
  return 2;
}

async function experiment(client: ApiClient, positionals: string[], values: Record<string, string | boolean | undefined>, json: boolean): Promise<number> {
  const [action, ...rest] = positionals;
  const usage = 'experiment submit <file> | experiment list [--archived] | experiment show|cancel|pause|resume|archive <experiment>';
  if (action === 'submit' && rest.length === 1) {
    await submitExperiment(client, io, rest[0], { idempotencyKey: values['idempotency-key'] as string | undefined, quiet: values.quiet === true, json });
    return 0;
  }
  if (action === 'list' && rest.length === 0) {
    await listExperiments(client, io, values.archived === true, json);
    return 0;
  }
  if (rest.length !== 1) throw new UsageError(usage);
  const id = await resolveExperimentId(client, rest[0]);
  if (action === 'show') await showExperiment(client, io, id, json);
  else if (action === 'cancel' || action === 'pause' || action === 'resume') await controlExperiment(client, io, id, action);
  else if (action === 'archive') await archiveExperiment(client, io, id, values.purge === true);
  else throw new UsageError(usage);
  return 0;
}

async function keys(client: ApiClient, positionals: string[], values: Record<string, string | boolean | undefined>, json: boolean): Promise<number> {
  const [action, ...rest] = positionals;
  const user = values.user as string | undefined;
  if (action === 'list' && rest.length === 0) await listKeys(client, io, user, json);
  else if (action === 'create' && rest.length === 0) {
    if (!values.name) throw new UsageError('keys create needs --name (what the key is for, e.g. laptop)');
    await createKey(client, io, values.name as string, user, json);
  } else if (action === 'revoke' && rest.length === 1) await revokeKey(client, io, rest[0]);
  else throw new UsageError('keys list | keys create --name N [--user U] | keys revoke <key id>');
  return 0;
}

async function evaluateCommand(values: Record<string, string | boolean | undefined>): Promise<number> {
  const str = (name: string) => values[name] as string | undefined;
  const checkpoint = str('checkpoint');
  if (!checkpoint) throw new UsageError('evaluate needs a job (a worker plays its checkpoint) or --checkpoint FILE (from `starlab download`, played here)');
  const bounded = (name: string, fallback: number, max: number) => {
    const value = integer(str(name), name) ?? fallback;
    if (value < 1 || value > max) throw new UsageError(`--${name} must be between 1 and ${max}`);
    return value;
  };
  const temperature = str('temperature') === undefined ? 0.5 : Number(str('temperature'));
  if (!(temperature >= 0 && temperature <= 2)) throw new UsageError('--temperature must be between 0 and 2');
  // Loaded only here: playing a checkpoint needs the trainer and tensorflow.js, which every other
  // command would otherwise load at its start.
  const { evaluateLocally, NotPlayable } = await import('./client/evaluate');
  try {
    await evaluateLocally(io, { checkpoint, env: str('env'), envConfig: str('env-config'), spec: str('spec'), episodes: bounded('episodes', 256, 1024), k: bounded('k', 4, 16), temperature, json: values.json === true });
  } catch (error) {
    if (!(error instanceof NotPlayable)) throw error;
    io.err(`starlab: this checkpoint cannot play that environment:\n${error.message}`);
    return 1;
  }
  return 0;
}

function exitOf(status: string): number {
  return status === 'succeeded' ? 0 : 1;
}

async function main(): Promise<void> {
  const abort = new AbortController();
  process.once('SIGINT', () => {
    abort.abort();
    process.stderr.write('\n');
    process.exit(130);
  });
  try {
    process.exitCode = await run(process.argv.slice(2), abort.signal);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`starlab: ${error.message}\n${error.message.startsWith('unknown command') ? `\n${USAGE}\n` : ''}`);
      process.exitCode = 2;
    } else if (error instanceof ApiError) {
      process.stderr.write(`${error.describe()}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`starlab: ${(error as Error).message}\n`);
      process.exitCode = 1;
    }
  }
}

main();

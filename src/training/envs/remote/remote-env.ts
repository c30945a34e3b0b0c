import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { CHARACTER_TOKENS, Tokenizer } from '../../policy/tokenizer';
import type { Env, EnvDefinition, StepResult } from '../types';
import { EnvServerError, Manifest, canonicalAction } from './protocol';
import type { RemoteSessions } from './sessions';

/**
 * One episode on an environment server, as an `Env`: `reset`, `step` and `clone` are requests
 * (`clone` is the protocol's fork; the copy's future randomness is the server's, so `branchSeed`
 * is not sent). An action outside the set the server offers is not sent: it is invalid, as on a
 * built-in. Success is the step's `success`, or else a positive reward on the step that ends the
 * episode (docs/environments.md).
 */
export class RemoteEnv implements Env {
  readonly symbolLegend: Readonly<Record<string, string>> = {};
  private session: string | null = null;
  private observation = '';
  private ended = false;
  private offered: readonly string[];

  constructor(private readonly sessions: RemoteSessions) {
    this.offered = sessions.manifest.actions;
  }

  get id(): string {
    return this.sessions.environment;
  }

  /** The actions the server offers in the current state: the manifest's set unless an answer narrowed it. */
  get actionNames(): readonly string[] {
    return this.offered;
  }

  get vocabulary(): readonly string[] {
    return this.sessions.manifest.vocabulary;
  }

  get done(): boolean {
    return this.ended;
  }

  async reset(seed: number): Promise<string> {
    if (this.session !== null) await this.close();
    const answer = await this.sessions.reset(seed);
    this.session = answer.session;
    this.observation = answer.observation;
    this.offered = answer.actions ?? this.sessions.manifest.actions;
    this.ended = false;
    return this.observation;
  }

  async step(action: string): Promise<StepResult> {
    const canonical = canonicalAction({ actions: this.offered }, action);
    if (canonical === undefined || this.ended) {
      return { observation: this.observation, reward: 0, done: this.ended, info: { success: false, actionValid: false, actionEffective: false } };
    }
    const answer = await this.sessions.step(this.live(), canonical);
    this.observation = answer.observation;
    this.ended = answer.done;
    this.offered = answer.actions ?? this.sessions.manifest.actions;
    const success = answer.success ?? (answer.done && answer.reward > 0);
    return { observation: answer.observation, reward: answer.reward, done: answer.done, info: { success, actionValid: true, actionEffective: true } };
  }

  render(): string {
    return this.observation;
  }

  async clone(): Promise<RemoteEnv> {
    const copy = new RemoteEnv(this.sessions);
    copy.session = await this.sessions.fork(this.live());
    copy.observation = this.observation;
    copy.ended = this.ended;
    copy.offered = this.offered;
    return copy;
  }

  /** The server's expert for the current state. */
  expert(): Promise<string[]> {
    return this.sessions.expert(this.live());
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = null;
    if (session !== null) await this.sessions.close(session);
  }

  private live(): string {
    if (this.session === null) throw new Error(`environment '${this.id}': no episode has been started (reset first)`);
    return this.session;
  }
}

/** What StarLab knows of a served environment beyond its manifest. */
export interface ServedEnvironment {
  url: string;
  protocol: 'starlab' | 'openenv';
  /** sha-256 of the manifest (`manifestDigest`): a checkpoint records it, and a resume on another manifest is refused. */
  digest: string;
  /** The server copies episodes (`POST /fork`): ARPO and AEPO need it. */
  fork: boolean;
  /** Tokens of the first observation of seed 0, which sizes the default context window. */
  observationTokens: number;
}

/** Canonical JSON of a manifest's fields, hashed: equal manifests, equal digests. */
export function manifestDigest(manifest: Manifest): string {
  const canonical = { actions: manifest.actions, maxTurns: manifest.maxTurns ?? null, vocabulary: manifest.vocabulary, expert: manifest.expert };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/**
 * A served environment as a definition, so every part of the trainer treats it as a built-in:
 * no config, the manifest's actions and words, its `maxTurns` as the rollout default, its expert
 * when it has one, and the actions each state offers for the random agent and the format warm-up.
 */
export function servedEnvDefinition(sessions: RemoteSessions, served: ServedEnvironment): EnvDefinition & { served: ServedEnvironment } {
  const { manifest } = sessions;
  return {
    id: sessions.environment,
    description: manifest.description || `environment served at ${served.url}`,
    configSchema: Type.Object({}, { additionalProperties: false }),
    defaults: {},
    create: () => new RemoteEnv(sessions),
    ...(manifest.expert ? { expert: (env: Env) => (env as RemoteEnv).expert() } : {}),
    actionNames: manifest.actions,
    ...(manifest.maxTurns === undefined ? {} : { rolloutDefaults: { maxTurns: manifest.maxTurns } }),
    vocabulary: () => manifest.vocabulary,
    observationTokens: () => served.observationTokens,
    served,
  };
}

/** HTTP statuses that say a server does not offer a request at all. */
const NOT_OFFERED = new Set([404, 405, 501]);

/**
 * What a first episode tells of a server: the size of its observations (seed 0's first one, in
 * the open vocabulary) and whether it copies episodes (a fork is tried; 404, 405 or 501 mean no).
 */
export async function probeServed(sessions: RemoteSessions, url: string, protocol: ServedEnvironment['protocol']): Promise<ServedEnvironment> {
  const { manifest } = sessions;
  const first = await sessions.reset(0);
  try {
    const words = [...manifest.vocabulary, ...manifest.actions];
    const observationTokens = new Tokenizer([...words, ...CHARACTER_TOKENS], manifest.actions).encode(first.observation).length;
    let fork = false;
    if (protocol === 'starlab') {
      try {
        await sessions.close(await sessions.fork(first.session));
        fork = true;
      } catch (error) {
        if (!(error instanceof EnvServerError && error.status !== undefined && NOT_OFFERED.has(error.status))) throw error;
      }
    }
    return { url, protocol, digest: manifestDigest(manifest), fork, observationTokens: Math.max(1, observationTokens) };
  } finally {
    await sessions.close(first.session);
  }
}

/**
 * A registered environment as stored (its manifest and what its first episode told), for
 * checking job specs where no connection is open (the API): any call to the server throws.
 */
export function storedServedDefinition(id: string, manifest: Manifest, served: ServedEnvironment): EnvDefinition & { served: ServedEnvironment } {
  const unconnected = (): never => {
    throw new Error(`environment '${id}' is not connected here (its stored registration only)`);
  };
  const sessions: RemoteSessions = { environment: id, manifest, reset: unconnected, step: unconnected, expert: unconnected, fork: unconnected, close: unconnected, dispose: () => undefined };
  return servedEnvDefinition(sessions, served);
}

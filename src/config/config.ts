import { hostname } from 'node:os';
import { isAbsolute } from 'node:path';
import { BACKEND_PREFERENCE, BackendChoice } from '../training/backend';
import { LOG_LEVELS, ServiceLogLevel } from './logger';

/** Everything the processes read from the environment, parsed and checked once at boot. */
export interface AppConfig {
  port: number;
  /** `log` (default) hides debug lines and the framework's start-up and route-mapping lines. */
  logLevel: ServiceLogLevel;
  databaseUrl: string;
  redisUrl: string;
  /** When set, this exact key is made an admin API key on start (idempotent). */
  adminKey: string | null;
  bodyLimitBytes: number;
  /** STARLAB_QUEUE_PREFIX; null = derived from the database's identity (docs/configuration.md). */
  queuePrefix: string | null;
  /** How often the dispatcher looks for stored jobs to hand to the queue. */
  dispatchIntervalMs: number;
  worker: {
    name: string;
    slots: number;
    backend: BackendChoice;
    device: 'gpu' | 'cpu';
    /** BullMQ lock: a worker that stops renewing it for this long is presumed dead. */
    lockDurationMs: number;
    stalledIntervalMs: number;
    heartbeatMs: number;
    /** How often a running job checks for cancel / pause / preempt requests. */
    controlPollMs: number;
    /** How long a write of a running job is retried before the attempt is given up. */
    writeDeadlineMs: number;
    /** Failed attempts (a result not stored, the runner failing) after which a job fails. */
    maxFailedAttempts: number;
    /** Longest an evaluation's child may play before it is killed and the evaluation fails. */
    evaluationTimeoutMs: number;
    /**
     * A local folder where the worker keeps finished warm-ups for jobs that share one (a preset
     * comparison, a learning-rate sweep), at most `entries` of them; null = every job trains its own.
     */
    warmupCache: { dir: string; entries: number } | null;
  };
  /** Checkpoints kept per job (the newest; healthy ones are preferred by rollback). */
  checkpointsKept: number;
  scheduling: {
    /** Defaults of User.maxRunningJobs / maxQueuedJobs (null there = these). */
    maxRunningJobs: number;
    maxQueuedJobs: number;
    /** Half-life of past usage in fair share: a slot-hour this long ago counts half. */
    fairShareHalfLifeS: number;
    /** A worker not heard from for this long no longer counts as capacity. */
    workerStaleMs: number;
  };
  /** Requests per API key per minute (0 = no limit). */
  rateLimitPerMinute: number;
  /** How long a replica trusts a resolved API key: the bound on revocation (0 = every request asks Postgres). */
  principalCacheMs: number;
  /** Failed API key lookups per client address per minute before its lookups are refused (0 = no limit). */
  authFailuresPerMinute: number;
  /** When set, GET /metrics includes per-job series (ids, names, owners) for a scraper that presents it as a bearer token. */
  metricsToken: string | null;
  /** How old a replica's view of the scheduling plan (queue positions) may be when read. */
  queueViewMs: number;
  /** How old a job's row may be when GET /v1/jobs/{id} serves it (0 = read at every request). */
  jobViewMs: number;
  webhooks: {
    /** First retry delay; later ones grow (×6, ×24, ×120, ×360, ×720). */
    retryBaseMs: number;
    timeoutMs: number;
    pollMs: number;
    /** Networks (CIDR, normalised) webhook endpoints may be in although they are private. */
    allowedNetworks: string[];
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Parses the environment into AppConfig. Every problem is collected, so a bad deployment
 * learns all of them at once, each naming the variable and what it must be.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer in [${min}, ${max}] (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return value;
  };
  // Connection URLs carry credentials: a problem shows the value without them (withoutCredentials).
  const url = (name: string, fallback: string, protocols: string[]): string => {
    const raw = env[name] || fallback;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) problems.push(`${name} must be a ${protocols.join(' or ')} URL (got ${JSON.stringify(withoutCredentials(raw))})`);
    } catch {
      problems.push(`${name} must be a URL (got ${JSON.stringify(withoutCredentials(raw))})`);
    }
    return raw;
  };
  const networks = (name: string, most: number): string[] => {
    const entries = (env[name] ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    if (entries.length > most) problems.push(`${name} may list at most ${most} networks (got ${entries.length})`);
    return entries.flatMap((entry) => {
      const network = parseNetwork(entry);
      if (network === null) problems.push(`${name} entry ${JSON.stringify(entry)} must be an IPv4 or IPv6 address, or a network such as 10.0.0.0/8 or fd00::/8`);
      return network === null ? [] : [network];
    });
  };
  const queuePrefix = env.STARLAB_QUEUE_PREFIX || null;
  if (queuePrefix !== null && !/^[A-Za-z0-9_.:-]{1,64}$/.test(queuePrefix)) {
    problems.push(`STARLAB_QUEUE_PREFIX must be 1–64 characters of letters, digits, _ - . or : (got ${JSON.stringify(queuePrefix)})`);
  }
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = (env[name] || fallback) as T;
    if (!allowed.includes(raw)) problems.push(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`);
    return raw;
  };
  const adminKey = env.STARLAB_ADMIN_KEY || null;
  if (adminKey !== null && !/^[A-Za-z0-9_-]{24,128}$/.test(adminKey)) {
    problems.push('STARLAB_ADMIN_KEY must be 24–128 characters of letters, digits, _ or -');
  }
  const metricsToken = env.STARLAB_METRICS_TOKEN || null;
  if (metricsToken !== null && !/^[A-Za-z0-9_.~+/=-]{24,256}$/.test(metricsToken)) {
    problems.push('STARLAB_METRICS_TOKEN must be 24–256 characters of letters, digits or _ . ~ + / = -');
  }
  const backend = oneOf<BackendChoice>('STARLAB_BACKEND', 'auto', ['auto', ...BACKEND_PREFERENCE]);
  const warmupCacheDir = env.STARLAB_WARMUP_CACHE_DIR || null;
  const warmupCacheEntries = int('STARLAB_WARMUP_CACHE_ENTRIES', 32, 1, 10_000);
  if (warmupCacheDir !== null && !isAbsolute(warmupCacheDir)) problems.push(`STARLAB_WARMUP_CACHE_DIR must be an absolute path (got ${JSON.stringify(warmupCacheDir)})`);
  const config: AppConfig = {
    port: int('PORT', 3000, 1, 65535),
    logLevel: oneOf<ServiceLogLevel>('STARLAB_LOG_LEVEL', 'log', LOG_LEVELS),
    databaseUrl: url('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/starlab', ['postgresql:', 'postgres:']),
    redisUrl: url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    adminKey,
    bodyLimitBytes: int('STARLAB_BODY_LIMIT_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    queuePrefix,
    dispatchIntervalMs: int('STARLAB_DISPATCH_INTERVAL_MS', 1000, 50, 60_000),
    worker: {
      name: env.STARLAB_WORKER_NAME || `${hostname()}-${process.pid}`,
      slots: int('STARLAB_WORKER_SLOTS', 1, 1, 64),
      backend,
      device: oneOf('STARLAB_WORKER_DEVICE', backend === 'tfjs-node-gpu' ? 'gpu' : 'cpu', ['gpu', 'cpu'] as const),
      lockDurationMs: int('STARLAB_LOCK_DURATION_MS', 30_000, 1000, 600_000),
      stalledIntervalMs: int('STARLAB_STALLED_INTERVAL_MS', 15_000, 500, 600_000),
      heartbeatMs: int('STARLAB_HEARTBEAT_MS', 5000, 100, 600_000),
      controlPollMs: int('STARLAB_CONTROL_POLL_MS', 500, 50, 60_000),
      writeDeadlineMs: int('STARLAB_WRITE_DEADLINE_MS', 5 * 60_000, 100, 3_600_000),
      maxFailedAttempts: int('STARLAB_MAX_FAILED_ATTEMPTS', 3, 1, 100),
      evaluationTimeoutMs: int('STARLAB_EVALUATION_TIMEOUT_MS', 30 * 60_000, 1000, 24 * 3_600_000),
      warmupCache: warmupCacheDir ? { dir: warmupCacheDir, entries: warmupCacheEntries } : null,
    },
    checkpointsKept: int('STARLAB_CHECKPOINTS_KEPT', 5, 1, 1000),
    scheduling: {
      maxRunningJobs: int('STARLAB_MAX_RUNNING_JOBS', 4, 1, 1000),
      maxQueuedJobs: int('STARLAB_MAX_QUEUED_JOBS', 100, 1, 100_000),
      fairShareHalfLifeS: int('STARLAB_FAIR_SHARE_HALF_LIFE_S', 3600, 1, 30 * 86_400),
      workerStaleMs: int('STARLAB_WORKER_STALE_MS', 20_000, 500, 3_600_000),
    },
    rateLimitPerMinute: int('STARLAB_RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000),
    principalCacheMs: int('STARLAB_PRINCIPAL_CACHE_MS', 5000, 0, 60_000),
    authFailuresPerMinute: int('STARLAB_AUTH_FAILURES_PER_MINUTE', 30, 0, 100_000),
    metricsToken,
    queueViewMs: int('STARLAB_QUEUE_VIEW_MS', 1000, 0, 60_000),
    jobViewMs: int('STARLAB_JOB_VIEW_MS', 1000, 0, 60_000),
    webhooks: {
      retryBaseMs: int('STARLAB_WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
      timeoutMs: int('STARLAB_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      pollMs: int('STARLAB_WEBHOOK_POLL_MS', 1000, 50, 60_000),
      allowedNetworks: networks('STARLAB_WEBHOOK_ALLOWED_NETWORKS', 64),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * A connection URL as it may be shown: user, password and query (libpq takes `password=` there)
 * replaced by `***`. Also for values that do not parse: everything up to the last `@` goes.
 */
export function withoutCredentials(raw: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0] ?? '';
  let rest = raw.slice(scheme.length);
  if (rest.includes('@')) rest = `***@${rest.slice(rest.lastIndexOf('@') + 1)}`;
  if (rest.includes('?')) rest = `${rest.slice(0, rest.indexOf('?'))}?***`;
  return scheme + rest;
}

/** `address` or `address/bits`, IPv4 or IPv6, as a normalised CIDR; null when it is neither. */
export function parseNetwork(entry: string): string | null {
  const [address, bits, extra] = entry.split('/');
  if (extra !== undefined || bits === '') return null;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  let normalised: string;
  let maxBits: number;
  if (v4) {
    if (v4.slice(1).some((octet) => Number(octet) > 255)) return null;
    normalised = v4.slice(1).map(Number).join('.');
    maxBits = 32;
  } else if (address.includes(':')) {
    try {
      // The WHATWG URL parser normalises IPv6 (and refuses what is not one) without a dependency.
      normalised = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
    maxBits = 128;
  } else {
    return null;
  }
  const prefix = bits === undefined ? maxBits : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(prefix >= 0 && prefix <= maxBits)) return null;
  return `${normalised}/${prefix}`;
}

/** Injection token of the AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

import { ConfigError, loadConfig } from './config';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('loadConfig', () => {
  it('takes every default from an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, queuePrefix: null, databaseUrl: 'postgresql://postgres@127.0.0.1:5432/starlab' });
    expect(config.worker).toMatchObject({ slots: 1, writeDeadlineMs: 300_000, maxFailedAttempts: 3 });
    expect(config.webhooks.allowedNetworks).toEqual([]);
  });

  it('names each bad variable once, with its bounds', () => {
    expect(problems({ STARLAB_WORKER_SLOTS: '0', STARLAB_WRITE_DEADLINE_MS: '50', STARLAB_MAX_FAILED_ATTEMPTS: 'many' })).toEqual([
      'STARLAB_WORKER_SLOTS must be an integer in [1, 64] (got "0")',
      'STARLAB_WRITE_DEADLINE_MS must be an integer in [100, 3600000] (got "50")',
      'STARLAB_MAX_FAILED_ATTEMPTS must be an integer in [1, 100] (got "many")',
    ]);
  });

  describe('never echoes credentials', () => {
    const secrets = ['alice', 's3cr3t-P4ss', 'hunter2'];
    const cases: [string, string][] = [
      ['DATABASE_URL', 'mysql://alice:s3cr3t-P4ss@db.lab:3306/starlab'],
      ['DATABASE_URL', 'postgresql://alice:s3cr3t-P4ss@db.lab:port/starlab'],
      ['DATABASE_URL', 'postgres://alice:s3cr3t/P4ss@db.lab/starlab?password=hunter2'],
      ['DATABASE_URL', 'alice:s3cr3t-P4ss@db.lab/starlab'],
      ['DATABASE_URL', 'postgresql://db.lab:99999/starlab?user=alice&password=hunter2'],
      ['REDIS_URL', 'http://alice:s3cr3t-P4ss@cache.lab:6379'],
      ['REDIS_URL', 'redis://:s3cr3t-P4ss@cache.lab:notaport'],
      ['REDIS_URL', 'rediss://alice:s3cr3t-P4ss@cache lab:6379'],
    ];
    it.each(cases)('%s=%s', (name, value) => {
      const found = problems({ [name]: value });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(new RegExp(`^${name} must be`));
      for (const secret of secrets) expect(found[0]).not.toContain(secret);
      // Still says what was wrong about it: the host stays when it is not secret.
      if (value.includes('db.lab') && found[0].includes('got')) expect(found[0]).toContain('db.lab');
    });
  });

  it('keeps no warm-up cache unless given an absolute folder, and bounds its entries', () => {
    expect(loadConfig({}).worker.warmupCache).toBeNull();
    expect(loadConfig({ STARLAB_WARMUP_CACHE_DIR: '/var/cache/starlab' }).worker.warmupCache).toEqual({ dir: '/var/cache/starlab', entries: 32 });
    expect(loadConfig({ STARLAB_WARMUP_CACHE_DIR: '/w', STARLAB_WARMUP_CACHE_ENTRIES: '5' }).worker.warmupCache).toEqual({ dir: '/w', entries: 5 });
    expect(problems({ STARLAB_WARMUP_CACHE_DIR: 'cache', STARLAB_WARMUP_CACHE_ENTRIES: '0' })).toEqual([
      'STARLAB_WARMUP_CACHE_ENTRIES must be an integer in [1, 10000] (got "0")',
      'STARLAB_WARMUP_CACHE_DIR must be an absolute path (got "cache")',
    ]);
  });

  it('takes an explicit queue prefix, within bounds', () => {
    expect(loadConfig({ STARLAB_QUEUE_PREFIX: 'lab-a' }).queuePrefix).toBe('lab-a');
    expect(problems({ STARLAB_QUEUE_PREFIX: 'has space' })).toEqual(['STARLAB_QUEUE_PREFIX must be 1–64 characters of letters, digits, _ - . or : (got "has space")']);
  });

  it('parses the webhook allowlist as networks, normalised', () => {
    const config = loadConfig({ STARLAB_WEBHOOK_ALLOWED_NETWORKS: ' 10.1.0.0/16, 127.0.0.1 ,fd00:0:0::/8,::1' });
    expect(config.webhooks.allowedNetworks).toEqual(['10.1.0.0/16', '127.0.0.1/32', 'fd00::/8', '::1/128']);
    expect(problems({ STARLAB_WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33,300.1.1.1,lab.internal,::1/129' })).toEqual([
      'STARLAB_WEBHOOK_ALLOWED_NETWORKS entry "10.0.0.0/33" must be an IPv4 or IPv6 address, or a network such as 10.0.0.0/8 or fd00::/8',
      'STARLAB_WEBHOOK_ALLOWED_NETWORKS entry "300.1.1.1" must be an IPv4 or IPv6 address, or a network such as 10.0.0.0/8 or fd00::/8',
      'STARLAB_WEBHOOK_ALLOWED_NETWORKS entry "lab.internal" must be an IPv4 or IPv6 address, or a network such as 10.0.0.0/8 or fd00::/8',
      'STARLAB_WEBHOOK_ALLOWED_NETWORKS entry "::1/129" must be an IPv4 or IPv6 address, or a network such as 10.0.0.0/8 or fd00::/8',
    ]);
    const many = Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`).join(',');
    expect(problems({ STARLAB_WEBHOOK_ALLOWED_NETWORKS: many })).toEqual(['STARLAB_WEBHOOK_ALLOWED_NETWORKS may list at most 64 networks (got 65)']);
  });
});

describe('loadConfig: STARLAB_LOG_LEVEL', () => {
  it('defaults to log and accepts the named levels', () => {
    expect(loadConfig({}).logLevel).toBe('log');
    expect(loadConfig({ STARLAB_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
  });

  it('names the variable and the allowed values when it is wrong', () => {
    expect(() => loadConfig({ STARLAB_LOG_LEVEL: 'chatty' })).toThrow(ConfigError);
    expect(() => loadConfig({ STARLAB_LOG_LEVEL: 'chatty' })).toThrow('STARLAB_LOG_LEVEL must be one of error, warn, log, debug, verbose (got "chatty")');
  });
});

import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { requestedThreads, shareCoresAmong } from './backend';

describe('loading the wasm backend', () => {
  it('leaves the process its own rejection handlers: a tolerated rejection does not kill it', () => {
    // Emscripten's build installs a handler that rethrows every unhandled rejection; the process
    // below tolerates one, as src/worker.ts tolerates a connection failure Prisma leaves unhandled.
    const script = `
      const { initBackend } = require(${JSON.stringify(join(__dirname, 'backend.ts'))});
      initBackend('wasm').then((name) => {
        process.on('unhandledRejection', (reason) => console.log('tolerated: ' + reason.message));
        Promise.reject(new Error('connection terminated'));
        setTimeout(() => console.log('alive on ' + name + ', ' + process.listenerCount('unhandledRejection') + ' handler(s)'), 100);
      });`;
    const run = spawnSync(process.execPath, ['-r', join(__dirname, '..', '..', 'scripts', 'register.js'), '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toMatch(/connection terminated/);
    expect(run.stdout).toContain('tolerated: connection terminated');
    expect(run.stdout).toContain('alive on wasm, 1 handler(s)');
    expect(run.status).toBe(0);
  });
});

describe('training threads', () => {
  const saved = { threads: process.env.STARLAB_TRAINING_THREADS, jest: process.env.JEST_WORKER_ID };
  const restore = (name: string, value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));
  afterEach(() => {
    restore('STARLAB_TRAINING_THREADS', saved.threads);
    restore('JEST_WORKER_ID', saved.jest);
  });

  it('takes STARLAB_TRAINING_THREADS in [1, 64], and refuses anything else naming the variable', () => {
    process.env.STARLAB_TRAINING_THREADS = '3';
    expect(requestedThreads()).toBe(3);
    process.env.STARLAB_TRAINING_THREADS = '64';
    expect(requestedThreads()).toBe(64);
    for (const bad of ['0', '65', '-2', '1.5', 'many']) {
      process.env.STARLAB_TRAINING_THREADS = bad;
      expect(() => requestedThreads()).toThrow(`STARLAB_TRAINING_THREADS must be an integer in [1, 64] (got "${bad}")`);
    }
  });

  it('uses every core outside Jest, one inside it', () => {
    delete process.env.STARLAB_TRAINING_THREADS;
    expect(requestedThreads()).toBe(1);
    delete process.env.JEST_WORKER_ID;
    expect(requestedThreads()).toBe(availableParallelism());
  });

  it('shares the cores among a worker\'s slots, at least one thread each, unless set or under Jest', () => {
    delete process.env.STARLAB_TRAINING_THREADS;
    shareCoresAmong(2);
    expect(process.env.STARLAB_TRAINING_THREADS).toBeUndefined(); // Jest's rule holds
    delete process.env.JEST_WORKER_ID;
    shareCoresAmong(availableParallelism() * 4);
    expect(process.env.STARLAB_TRAINING_THREADS).toBe('1');
    delete process.env.STARLAB_TRAINING_THREADS;
    shareCoresAmong(1);
    expect(process.env.STARLAB_TRAINING_THREADS).toBe(String(availableParallelism()));
    process.env.STARLAB_TRAINING_THREADS = '5';
    shareCoresAmong(1);
    expect(process.env.STARLAB_TRAINING_THREADS).toBe('5');
  });
});

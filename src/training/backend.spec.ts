import { availableParallelism } from 'node:os';
import { requestedThreads, shareCoresAmong } from './backend';

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

import { useTestBackend } from '../../test/support/tf';
import type { Metrics } from './signals/step-metrics';
import { parseJobSpec } from './spec/validate';
import { Trainer } from './trainer';
import { WarmupStore, warmupKey } from './warmup-store';

type Overrides = { algorithm?: object; rollout?: object; training?: object; model?: object };

/** Two RL steps after a five-step demonstrations warm-up, small enough for seconds. */
const spec = (o: Overrides = {}) =>
  parseJobSpec({
    environment: { id: 'frozenlake', config: { slippery: false } },
    algorithm: { id: 'starpo-ppo', config: { miniBatchSize: 4 } },
    model: { config: { layers: 1, dModel: 16, heads: 2, ...o.model } },
    rollout: { groups: 2, groupSize: 4, maxTurns: 2, maxTokensPerTurn: 16, historyTurns: 1, ...o.rollout },
    training: { steps: 2, evalEvery: 2, evalEpisodes: 8, checkpointEvery: 0, warmup: { kind: 'demonstrations', steps: 5, batchSize: 16 }, ...o.training },
    ...(o.algorithm ? { algorithm: o.algorithm } : {}),
  });

/** A store in memory that counts what it was asked. */
function memoryStore(): WarmupStore & { puts: number; hits: number; size: () => number } {
  const bytes = new Map<string, Uint8Array>();
  const store = {
    puts: 0,
    hits: 0,
    size: () => bytes.size,
    get: (key: string) => {
      const found = bytes.get(key);
      if (found) store.hits++;
      return found;
    },
    put: (key: string, value: Uint8Array) => {
      store.puts++;
      bytes.set(key, value);
    },
  };
  return store;
}

async function train(s: ReturnType<typeof spec>, warmupStore?: WarmupStore): Promise<Map<number, Metrics>> {
  const trainer = await Trainer.create(s, { warmupStore });
  const steps = new Map<number, Metrics>();
  await trainer.run({ onStep: (step, metrics) => void steps.set(step, metrics) });
  trainer.dispose();
  return steps;
}

/** Everything but timings and the reuse flag itself. */
const comparable = (metrics: Metrics | undefined) =>
  Object.fromEntries(Object.entries(metrics ?? {}).filter(([name]) => !name.startsWith('perf/') && name !== 'warmup/ms' && name !== 'warmup/reused'));

describe('warm-up store', () => {
  beforeAll(useTestBackend);

  it('lets a job with another preset, learning rate and batch reuse a warm-up, and train exactly as without it', async () => {
    const store = memoryStore();
    const first = await train(spec({ algorithm: { id: 'starpo-s' } }), store);
    expect(first.get(0)!['warmup/reused']).toBe(0);
    expect(store.puts).toBe(1);

    // PPO (a critic that starts from the warmed-up actor), another RL learning rate, batch and temperature.
    const other = spec({ rollout: { groups: 4, groupSize: 2, temperature: 0.7 }, training: { learningRate: 0.003 } });
    const reused = await train(other, store);
    expect(reused.get(0)!['warmup/reused']).toBe(1);
    expect(store.hits).toBe(1);
    expect(store.puts).toBe(1);

    const alone = await train(other);
    expect(alone.get(0)!['warmup/reused']).toBeUndefined();
    for (const step of [0, 1, 2]) expect(comparable(reused.get(step))).toEqual(comparable(alone.get(step)));
    // The step-0 evaluation really is the warmed-up policy's, not a fresh model's.
    expect(reused.get(0)!['warmup/loss']).toBe(first.get(0)!['warmup/loss']);
  }, 120_000);

  it('trains its own warm-up when anything the warm-up reads differs', async () => {
    const store = memoryStore();
    await train(spec(), store);
    await train(spec({ training: { seed: 2 } }), store);
    expect(store.hits).toBe(0);
    expect(store.size()).toBe(2);
  }, 120_000);

  it('keys on what the warm-up reads and on nothing the RL phase alone reads', () => {
    const tokens = ['a', 'b'];
    const base = warmupKey(spec(), tokens, 'wasm');
    const same = [
      spec({ algorithm: { id: 'starpo-grpo' } }),
      spec({ training: { learningRate: 0.02, steps: 50, evalEvery: 10, evalEpisodes: 256 } }),
      spec({ rollout: { groups: 8, groupSize: 16, temperature: 0.5 } }),
    ];
    for (const s of same) expect(warmupKey(s, tokens, 'wasm')).toBe(base);
    const differs = [
      spec({ training: { seed: 2 } }),
      spec({ training: { warmup: { kind: 'demonstrations', steps: 6, batchSize: 16 } } }),
      spec({ training: { warmup: { kind: 'format', steps: 5, batchSize: 16 } } }),
      spec({ model: { dModel: 32 } }),
      spec({ rollout: { historyTurns: 2 } }),
      spec({ rollout: { think: true, maxTokensPerTurn: 24 } }),
    ];
    for (const s of differs) expect(warmupKey(s, tokens, 'wasm')).not.toBe(base);
    expect(warmupKey(spec(), tokens, 'cpu')).not.toBe(base);
    expect(warmupKey(spec(), ['a', 'c'], 'wasm')).not.toBe(base);
  });

  it('trains the warm-up when the stored one does not load, and runs on when the store cannot write', async () => {
    const logs: string[] = [];
    const broken: WarmupStore = {
      get: () => new Uint8Array([1, 2, 3]),
      put: () => {
        throw new Error('disk full');
      },
    };
    const trainer = await Trainer.create(spec(), { warmupStore: broken });
    const steps = new Map<number, Metrics>();
    const result = await trainer.run({ onStep: (step, metrics) => void steps.set(step, metrics), onLog: (m) => void logs.push(m) });
    trainer.dispose();
    expect(result).toEqual({ status: 'completed', step: 2 });
    expect(steps.get(0)!['warmup/reused']).toBe(0);
    expect(logs.some((m) => m.includes('does not load'))).toBe(true);
    expect(logs.some((m) => m.includes('not stored (disk full)'))).toBe(true);
    const alone = await train(spec());
    for (const step of [0, 1, 2]) expect(comparable(steps.get(step))).toEqual(comparable(alone.get(step)));
  }, 120_000);
});

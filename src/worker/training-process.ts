/**
 * Entry point of the child process that trains one job (see training-protocol.ts).
 * It exits when its parent goes away, so a killed worker never leaves training orphans.
 */
import type { EnvDefinition } from '../training/envs/types';
import type { TrajectoryRecord } from '../training/records';
import { Trainer } from '../training/trainer';
import { WarmupFileStore } from '../repositories/warmup-file-store';
import { connectRegistered } from './served-connection';
import type { ChildReport, ParentMessage } from './training-protocol';

let seq = 0;
const pendingAcks = new Map<number, () => void>();
let stopRequested = false;

function send(report: ChildReport): Promise<void> {
  const id = ++seq;
  return new Promise((resolve) => {
    pendingAcks.set(id, resolve);
    process.send!({ ...report, seq: id });
  });
}

async function train(message: Extract<ParentMessage, { type: 'start' }>): Promise<void> {
  const log = (text: string) => void send({ type: 'log', message: text });
  const { dir, entries } = message.warmupCache ?? { dir: null, entries: 0 };
  const warmupStore = dir ? new WarmupFileStore(dir, { maxEntries: entries, log }) : undefined;
  const served = message.served ? await connectRegistered(message.served) : null;
  try {
    await trainOn(message, served?.definition, warmupStore, log);
  } finally {
    served?.dispose();
  }
}

async function trainOn(message: Extract<ParentMessage, { type: 'start' }>, environment: EnvDefinition | undefined, warmupStore: WarmupFileStore | undefined, log: (text: string) => void): Promise<void> {
  const trainer = await Trainer.create(message.spec, { backend: message.backend, resumeFrom: message.checkpoint ?? undefined, warmupStore, environment }, log);
  await send({ type: 'started', backend: trainer.backend, fromStep: Math.max(trainer.step, 0), parameters: trainer.parameterCount });
  let trajectories: TrajectoryRecord[] = [];
  const result = await trainer.run({
    onLog: log,
    onTrajectories: (_step, records) => {
      trajectories = records;
    },
    onStep: async (step, metrics) => {
      await send({ type: 'step', step, metrics, trajectories });
      trajectories = [];
    },
    onWarnings: (step, warnings) => send({ type: 'warnings', step, warnings }),
    onCheckpoint: (step, bytes, health) => send({ type: 'checkpoint', step, bytes, health }),
    // Yields to the event loop first, so a stop message sent during a long synchronous stretch
    // (the warm-up's steps) is read between two steps, not after the warm-up.
    shouldStop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return stopRequested;
    },
  });
  await send({ type: 'finished', status: result.status, step: result.step });
  trainer.dispose();
}

process.on('message', (message: ParentMessage) => {
  if (message.type === 'ack') {
    pendingAcks.get(message.seq)?.();
    pendingAcks.delete(message.seq);
  } else if (message.type === 'stop') {
    stopRequested = true;
  } else if (message.type === 'start') {
    train(message)
      .then(() => process.exit(0))
      .catch(async (error: Error) => {
        await send({ type: 'failed', error: error.message });
        process.exit(1);
      });
  }
});
process.on('disconnect', () => process.exit(70));

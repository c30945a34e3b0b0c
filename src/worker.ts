/**
 * Worker process: consumes the training queue and trains in child processes; no public HTTP.
 * SIGTERM / SIGINT: running jobs checkpoint and go back to the queue, then the process exits.
 * A queue consumer that stops on its own, or an error nothing handled, ends the process with
 * code 1: its supervisor starts it again, and the restarted worker gives back what it held.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from './config/config';
import { ServiceLogger } from './config/logger';
import { isTransient } from './services/retry';
import { WorkerLifecycle } from './worker/worker-lifecycle';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: new ServiceLogger(loadConfig().logLevel) });
  const lifecycle = app.get(WorkerLifecycle);
  const logger = new Logger('Worker');
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received`);
    await lifecycle.stop();
    await app.close();
    process.exit(0);
  };
  // During a database outage Prisma 6.19 can leave the rejection of a connection failure
  // unhandled inside its transaction code (seen under load in test/faults); the write that hit it
  // is retried where it was made, so that one is logged. Anything else is a bug: exit.
  process.on('unhandledRejection', (reason) => {
    if (isTransient(reason)) return logger.warn(`unhandled rejection of a connection failure (the write is retried where it was made): ${(reason as Error)?.message ?? reason}`);
    logger.error(`unhandled rejection, exiting: ${(reason as Error)?.stack ?? reason}`);
    process.exit(1);
  });
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  void lifecycle.fatal.then(() => {
    if (!stopping) process.exit(1);
  });
  await lifecycle.start();
}

bootstrap().catch((error) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});

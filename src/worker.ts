/**
 * Worker process: consumes the training queue and trains in child processes; no public HTTP.
 * SIGTERM / SIGINT: running jobs checkpoint and go back to the queue, then the process exits.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from './config/config';
import { ServiceLogger } from './config/logger';
import { WorkerLifecycle } from './worker/worker-lifecycle';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: new ServiceLogger(loadConfig().logLevel) });
  const lifecycle = app.get(WorkerLifecycle);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    new Logger('Worker').log(`${signal} received`);
    await lifecycle.stop();
    await app.close();
    process.exit(0);
  };
  // During a database outage Prisma 6.19 can leave a rejected promise unhandled inside its
  // transaction code (seen under load in test/faults). Dying would only turn a blip into a
  // resume from checkpoint; log it and keep going: writes are retried where they are made.
  process.on('unhandledRejection', (reason) => new Logger('Worker').error(`unhandled rejection (continuing): ${(reason as Error)?.message ?? reason}`));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await lifecycle.start();
}

bootstrap().catch((error) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});

/**
 * API process: HTTP only — validates, stores, dispatches to the queue, reads results.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiModule } from './api.module';
import { configureHttp } from './api/http';
import { APP_CONFIG, AppConfig, ConfigError, loadConfig } from './config/config';
import { ServiceLogger } from './config/logger';
import { AuthService } from './services/auth.service';
import { DispatchService } from './services/dispatch.service';
import { WebhookService } from './services/webhook.service';

async function bootstrap(): Promise<void> {
  // Fail fast, with every bad variable named, before anything connects.
  const app = await NestFactory.create<NestExpressApplication>(ApiModule, { bodyParser: false, logger: new ServiceLogger(loadConfig().logLevel) });
  const config = app.get<AppConfig>(APP_CONFIG);
  configureHttp(app, config);
  app.enableShutdownHooks();
  if (config.adminKey) await app.get(AuthService).bootstrapAdminKey(config.adminKey);
  app.get(DispatchService).start();
  app.get(WebhookService).start();
  await app.listen(config.port);
  new Logger('Main').log(`StarLab API listening on http://localhost:${config.port} (docs at /docs)`);
}

bootstrap().catch((error) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});

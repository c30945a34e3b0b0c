import { ConsoleLogger, LogLevel } from '@nestjs/common';

export const LOG_LEVELS = ['error', 'warn', 'log', 'debug', 'verbose'] as const;
export type ServiceLogLevel = (typeof LOG_LEVELS)[number];

/** Nest's start-up chatter: one line per module, controller and route. */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestApplicationContext']);

/**
 * The processes' logger: the service's own messages at `level` and above; the framework's
 * route-mapping and module lines only at `debug` or `verbose` (STARLAB_LOG_LEVEL). Colours only
 * on a terminal: written to a file or a pipe (a log collector, `npm run up > log`), the lines are
 * plain text, and NO_COLOR turns them off on a terminal too.
 */
export class ServiceLogger extends ConsoleLogger {
  private readonly framework: boolean;

  constructor(level: ServiceLogLevel, colors = Boolean(process.stdout.isTTY)) {
    super({ colors });
    const levels: LogLevel[] = ['fatal', ...LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1)];
    this.setLogLevels(levels);
    this.framework = level === 'debug' || level === 'verbose';
  }

  override log(message: unknown, ...rest: unknown[]): void {
    const context = rest.length > 0 ? rest[rest.length - 1] : this.context;
    if (!this.framework && typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context)) return;
    super.log(message, ...rest);
  }
}

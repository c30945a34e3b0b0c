import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { PrismaService } from './prisma.service';

/** Where a deployment's Redis keys live, and the database identity that owns them. */
export interface Namespace {
  prefix: string;
  deploymentId: string;
}

/** The default prefix before it was derived from the database (jobs queued under it are adopted: DispatchService). */
export const LEGACY_PREFIX = 'starlab';

/**
 * The Redis namespace of this deployment: STARLAB_QUEUE_PREFIX when set, else `starlab-` and the
 * first 12 hex digits of the database's identity (its `deployment` row), so that two
 * deployments sharing one Redis never share a queue, whatever host name each uses for the
 * database. Read on first use and kept; a failed read (Postgres down) is tried again next time,
 * so a process can start during an outage.
 */
@Injectable()
export class QueueNamespace {
  private resolved: Promise<Namespace> | null = null;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  resolve(): Promise<Namespace> {
    this.resolved ??= this.read().catch((error: unknown) => {
      this.resolved = null;
      throw error;
    });
    return this.resolved;
  }

  /** Whether the prefix was derived (not configured): only then are legacy carriers adopted. */
  get derived(): boolean {
    return this.config.queuePrefix === null;
  }

  private async read(): Promise<Namespace> {
    // The migration made the row; make it again if someone emptied the table. Every process
    // then takes the oldest row, so concurrent starts agree.
    await this.prisma.$executeRaw`INSERT INTO deployment (id) SELECT gen_random_uuid() WHERE NOT EXISTS (SELECT 1 FROM deployment)`;
    const { id } = await this.prisma.deployment.findFirstOrThrow({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select: { id: true } });
    return { prefix: this.config.queuePrefix ?? `starlab-${id.replace(/-/g, '').slice(0, 12)}`, deploymentId: id };
  }
}

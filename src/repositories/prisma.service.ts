import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

/** Injection token for the Postgres connection string (provided by the config module). */
export const DATABASE_URL = Symbol('DATABASE_URL');

/**
 * The one Prisma client of a process, connected through `pg` (Prisma's Rust-free client with
 * the `@prisma/adapter-pg` driver adapter, so no query engine binary is needed).
 *
 * BigInt columns (`JobEvent.id`, `Trajectory.id`, `Trajectory.envSeed`) come back as JavaScript
 * `bigint`, which `JSON.stringify` refuses ("Do not know how to serialize a BigInt"). Convert them
 * where they leave the service: the SSE event id and ids in responses as decimal strings
 * (`String(id)`), seeds as strings too since they may exceed 2^53. Nothing patches
 * `BigInt.prototype.toJSON` globally. `Bytes` columns are `Uint8Array`s. A nullable `Json` column
 * is cleared with `Prisma.DbNull` (SQL NULL); `Prisma.JsonNull` stores the JSON value `null`.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(DATABASE_URL) databaseUrl: string) {
    super({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  }

  async onModuleInit(): Promise<void> {
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

import { Inject, Injectable, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client';

/** Injection token for the Postgres connection string (provided by the config module). */
export const DATABASE_URL = Symbol('DATABASE_URL');

/**
 * How long Postgres lets a session sit idle inside a transaction before it ends the session (and
 * with it the transaction's row locks). A process frozen mid-transaction (SIGSTOP, a suspended VM,
 * a stalled host) would otherwise hold a job's row lock for as long as it stays frozen, and the
 * worker that takes its job over would wait on that lock instead of training. This service's
 * transactions send their statements back to back; none waits on anything else in between.
 */
export const IDLE_IN_TRANSACTION_MS = 15_000;
/** Injection token for another bound than IDLE_IN_TRANSACTION_MS; the service provides none (tests pass one to the constructor). */
export const IDLE_IN_TRANSACTION = Symbol('IDLE_IN_TRANSACTION');

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
  /** The pool Prisma's adapter runs on; `prepared` uses it directly. Ended by `$disconnect()`. */
  private readonly pool: pg.Pool;

  constructor(@Inject(DATABASE_URL) databaseUrl: string, @Optional() @Inject(IDLE_IN_TRANSACTION) idleInTransactionMs: number = IDLE_IN_TRANSACTION_MS) {
    const pool = new pg.Pool({ connectionString: databaseUrl, idle_in_transaction_session_timeout: idleInTransactionMs });
    // An idle client's error (Postgres restarted) is emitted on the pool, and with no listener it
    // would end the process; pg-pool drops that client either way and the next query opens another.
    pool.on('error', () => undefined);
    super({ adapter: new ResilientPrismaPg(pool, { disposeExternalPool: true }) });
    this.pool = pool;
  }

  /**
   * A statement on the hottest paths (a job's read, a step's write), prepared by name on
   * Prisma's own pool: Postgres parses and plans it once per connection, and no query is
   * compiled in this process.
   * A Prisma query costs about 0.35–0.5 ms of CPU here (its query compiler runs per call), this
   * about 0.12 ms (docs/performance.md). Rows come back as `pg` parses them: snake_case columns,
   * jsonb parsed, timestamptz as `Date`; the caller maps them to the model's shape.
   */
  async prepared<T extends Record<string, unknown>>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return (await this.pool.query<T>({ name, text, values })).rows;
  }

  async onModuleInit(): Promise<void> {
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

type PgAdapter = Awaited<ReturnType<PrismaPg['connect']>>;
type PgTransaction = Awaited<ReturnType<PgAdapter['startTransaction']>>;

/**
 * `PrismaPg` that gives a transaction's connection back to the pool when the connection breaks
 * (Postgres restarted or unreachable: docs/failure-behaviour.md).
 *
 * Prisma 6.19's transaction manager ends a transaction with `executeRaw('COMMIT' | 'ROLLBACK')`
 * and only then calls `commit()` / `rollback()`, which release the pooled client. On a dead
 * connection that statement fails, the release is skipped and the client stays checked out for
 * ever: each outage that hits a transaction leaks one, until the pool (10) is exhausted and every
 * query waits for ever, and `$disconnect()` hangs waiting for them. The failed ROLLBACK also
 * surfaced as an unhandled rejection, which ends the process.
 *
 * So a transaction statement that fails on a connection `pg` has marked unusable releases that
 * client at once (pg-pool then discards it and opens a new one), later releases are no-ops, and
 * ROLLBACK on such a connection succeeds: Postgres has already aborted a transaction whose
 * connection is gone. COMMIT still fails, so the caller retries the whole transaction.
 */
export class ResilientPrismaPg extends PrismaPg {
  override async connect(): Promise<PgAdapter> {
    const adapter = await super.connect();
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => guardTransaction(await startTransaction(isolationLevel));
    return adapter;
  }
}

function guardTransaction(transaction: PgTransaction): PgTransaction {
  const client = (transaction as unknown as { client: pg.PoolClient }).client;
  const release = client.release;
  let released = false;
  client.release = (error?: Error | boolean) => {
    if (released) return;
    released = true;
    release.call(client, error);
  };
  const guard = <A extends unknown[], R>(run: (...args: A) => Promise<R>, onBroken: (sql: string) => R | undefined) =>
    async (...args: A): Promise<R> => {
      try {
        return await run(...args);
      } catch (error) {
        if (!isBroken(client)) throw error;
        client.release(error instanceof Error ? error : new Error(String(error)));
        const sql = (args[0] as { sql?: string } | undefined)?.sql ?? '';
        const result = onBroken(sql);
        if (result === undefined) throw error;
        return result;
      }
    };
  transaction.executeRaw = guard(transaction.executeRaw.bind(transaction), (sql) => (/^\s*ROLLBACK\s*$/i.test(sql) ? 0 : undefined));
  transaction.queryRaw = guard(transaction.queryRaw.bind(transaction), () => undefined);
  return transaction;
}

/** Whether `pg` will refuse further queries on this client (the same test pg-pool applies on release). */
function isBroken(client: pg.PoolClient): boolean {
  const state = client as unknown as { _queryable?: boolean; _ending?: boolean; _ended?: boolean };
  return state._queryable === false || state._ending === true || state._ended === true;
}

import pg from 'pg';
import { PrismaClient } from '../../src/generated/prisma/client';
import { ResilientPrismaPg } from '../../src/repositories/prisma.service';
import { isTransient, withRetry } from '../../src/services/retry';
import { TestDatabase, createTestDatabase } from '../support/database';
import { PrivatePostgres } from '../support/servers';

/**
 * The Prisma client as the processes build it (PrismaService's adapter) against a Postgres of its
 * own that goes away in the middle of a transaction: the broken connection must go back to the
 * pool (not leak), the error must be one a retry recognises, and the retry must succeed.
 */
describe('database connections across a Postgres outage', () => {
  let server: PrivatePostgres | undefined;
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let prisma: PrismaClient | undefined;

  beforeAll(async () => {
    server = await PrivatePostgres.create();
    database = await createTestDatabase(server.url);
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    prisma = new PrismaClient({ adapter: new ResilientPrismaPg(pool) });
    await prisma.$connect();
  }, 30_000);

  afterAll(async () => {
    if (server && !server.running) await server.start().catch(() => undefined);
    // Bounded: with a leaked client (the bug this guards against) these would wait for ever.
    const bounded = (work: Promise<unknown> | undefined) => Promise.race([work?.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 3000))]);
    await bounded(prisma?.$disconnect());
    await bounded(pool?.end());
    await database?.drop().catch(() => undefined);
    await server?.destroy();
  }, 30_000);

  const checkedOut = () => pool!.totalCount - pool!.idleCount;

  it.each(['fast', 'immediate'] as const)('a transaction cut by a %s shutdown releases its connection; the retried write succeeds', async (mode) => {
    const db = prisma!;
    const name = `outage-${mode}`;
    let attempts = 0;
    const failures: unknown[] = [];
    const user = await withRetry(
      () =>
        db.$transaction(async (tx) => {
          attempts++;
          await tx.user.findMany({ take: 1 });
          if (attempts === 1) await server!.stop(mode); // the server goes away mid-transaction
          return tx.user.create({ data: { name, role: 'member' } });
        }),
      {
        deadlineMs: 30_000,
        onRetry: (error, attempt) => {
          failures.push(error);
          if (attempt === 1) void server!.start(); // back while the retries go on
        },
      },
    );
    expect(user.name).toBe(name);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every(isTransient)).toBe(true);
    expect(checkedOut()).toBe(0); // nothing leaked: a pool of 3 would run dry after three outages

    // The pool still serves more concurrent transactions than it has connections.
    const rows = await Promise.all(Array.from({ length: 8 }, () => db.$transaction([db.user.count(), db.user.count()])));
    expect(rows).toHaveLength(8);
    expect(checkedOut()).toBe(0);
  }, 60_000);

  it('a batch transaction during the outage fails with a retryable error and succeeds once Postgres is back', async () => {
    const db = prisma!;
    await server!.stop('fast');
    const error = await db.$transaction([db.user.count(), db.user.count()]).catch((e: unknown) => e);
    expect(isTransient(error)).toBe(true);
    await server!.start();
    expect(await withRetry(() => db.$transaction([db.user.count(), db.user.count()]), { deadlineMs: 10_000 })).toHaveLength(2);
    expect(checkedOut()).toBe(0);
  }, 30_000);
});

describe('isTransient', () => {
  const adapterError = (cause: Record<string, unknown>) => Object.assign(new Error(String(cause.message ?? cause.kind)), { name: 'DriverAdapterError', cause });

  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['Prisma: server unreachable', Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' })],
    ['pg: a client whose connection broke', new Error('Client has encountered a connection error and is not queryable')],
    ['pg: connection ended', new Error('Connection terminated unexpectedly')],
    ['adapter: connection closed', adapterError({ kind: 'ConnectionClosed' })],
    ['adapter: server unreachable', adapterError({ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 })],
    ['adapter: backend terminated', adapterError({ kind: 'postgres', code: '57P01', message: 'terminating connection due to administrator command' })],
    ['adapter: server starting', adapterError({ kind: 'postgres', code: '57P03', message: 'the database system is not yet accepting connections' })],
  ])('retries %s', (_, error) => {
    expect(isTransient(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('Unique constraint failed on the fields: (`name`)'), { code: 'P2002' })],
    ['adapter: unique violation', adapterError({ kind: 'UniqueConstraintViolation', constraint: { fields: ['name'] } })],
    ['adapter: other Postgres error', adapterError({ kind: 'postgres', code: '22P02', message: 'invalid input syntax for type uuid' })],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('does not retry %s', (_, error) => {
    expect(isTransient(error)).toBe(false);
  });
});

import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';

const MIGRATIONS_DIR = resolve(__dirname, '../../prisma/migrations');
const DEFAULT_BASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  /** Drops the database, closing any connection still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates an empty database on the server of `baseUrl` (default: STARLAB_TEST_DATABASE_URL, else
 * the local Postgres) and applies every migration under prisma/migrations in order. The SQL is
 * run with `pg` directly: `prisma migrate deploy` would take ~10 s per database.
 */
export async function createTestDatabase(baseUrl: string = process.env.STARLAB_TEST_DATABASE_URL ?? DEFAULT_BASE_URL): Promise<TestDatabase> {
  const name = `starlab_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = withDatabase(baseUrl, name);

  await runOn(baseUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const drop = () => runOn(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  try {
    await runOn(url, applyMigrations);
  } catch (error) {
    await drop();
    throw error;
  }
  return { url, drop: async () => void (await drop()) };
}

async function applyMigrations(client: Client): Promise<void> {
  const migrations = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const migration of migrations) {
    const sql = readFileSync(join(MIGRATIONS_DIR, migration, 'migration.sql'), 'utf8');
    try {
      await client.query(sql);
    } catch (error) {
      throw new Error(`migration ${migration} failed: ${(error as Error).message}`, { cause: error });
    }
  }
}

async function runOn<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Same connection string with another database (also for socket URLs, which `URL` rejects). */
function withDatabase(url: string, database: string): string {
  const match = /^([a-z]+:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/i.exec(url);
  if (!match) throw new Error('STARLAB_TEST_DATABASE_URL is not a postgres connection string');
  return `${match[1]}/${database}${match[3] ?? ''}`;
}

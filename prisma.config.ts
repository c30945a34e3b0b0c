/**
 * Prisma CLI configuration (generate, migrate, diff). Migrations run in Prisma's bundled
 * WebAssembly schema engine over `pg`, so no engine binary is downloaded: the npm scripts point
 * PRISMA_SCHEMA_ENGINE_BINARY / PRISMA_QUERY_ENGINE_LIBRARY at /bin/false for that reason.
 * The service itself connects through src/repositories/prisma.service.ts, not through this file.
 *
 * Known limits of the wasm engine in 6.19.3, not fixable here: it leaves timers armed, so
 * `migrate deploy` sits ~10 s and `migrate dev` ~60 s after finishing; `migrate dev` fails
 * ("shadow DB must be provided through an external factory") right after it has applied pending
 * migrations itself, hence `npm run db:migrate:dev` runs `migrate deploy` first; and
 * `migrate dev --create-only` writes the migration, then exits 1 ("null pointer passed to rust").
 */
import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client, type ClientConfig, type PoolConfig } from 'pg';
import { defineConfig } from 'prisma/config';

const PG_CHAR_OID = 18;
const PG_NAME_OID = 19;
const PG_TEXT_OID = 25;

interface RowDescription {
  fields: { dataTypeID: number }[];
}

/**
 * Workaround for prisma/prisma#27403: the adapter cannot map the `name` and `"char"` columns the
 * schema engine reads from pg_catalog ("Column type 'name' could not be deserialized"). Both are
 * plain strings on the wire, so report them as `text` before pg parses the rows.
 */
class CatalogTextClient extends Client {
  _handleRowDescription(message: RowDescription): void {
    for (const field of message.fields) {
      if (field.dataTypeID === PG_NAME_OID || field.dataTypeID === PG_CHAR_OID) {
        field.dataTypeID = PG_TEXT_OID;
      }
    }
    (Client.prototype as unknown as CatalogTextClient)._handleRowDescription.call(this, message);
  }
}

function poolConfig(connectionString: string): PoolConfig {
  // allowExitOnIdle: idle pooled connections would otherwise keep the CLI alive for 10 s.
  return { connectionString, Client: CatalogTextClient, allowExitOnIdle: true };
}

/** Same connection string with another database (also for socket URLs, which `URL` rejects). */
function withDatabase(url: string, database: string): string {
  const match = /^([a-z]+:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/i.exec(url);
  if (!match) throw new Error('DATABASE_URL is not a postgres connection string');
  return `${match[1]}/${database}${match[3] ?? ''}`;
}

async function execute(config: ClientConfig, sql: string): Promise<void> {
  const client = new Client(config);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Workaround for the shadow database of `migrate dev` / `migrate diff`: PrismaPg creates it but
 * then connects to the main database (the `database` it sets is overridden by the connection
 * string), and drops it while its own pool is still connected. Create it here, connect to it,
 * and drop it `WITH (FORCE)` once Prisma disposes of the connection.
 */
class MigrationAdapter extends PrismaPg {
  constructor(private readonly url: string) {
    super(poolConfig(url));
  }

  override async connectToShadowDb(): ReturnType<PrismaPg['connectToShadowDb']> {
    const shadowDatabase = `prisma_shadow_${randomUUID().replaceAll('-', '')}`;
    await execute({ connectionString: this.url }, `CREATE DATABASE "${shadowDatabase}"`);
    const adapter = await new PrismaPg(poolConfig(withDatabase(this.url, shadowDatabase))).connect();
    const disposeConnection = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await disposeConnection();
      await execute({ connectionString: this.url }, `DROP DATABASE IF EXISTS "${shadowDatabase}" WITH (FORCE)`);
    };
    return adapter;
  }
}

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set (postgresql://user@host:5432/database)');
    return new MigrationAdapter(url);
  },
});

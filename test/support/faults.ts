import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A fault injected into a real Postgres: a trigger that makes some writes to a table fail. */
export interface InjectedFault {
  /** Writes it has matched so far (all failed, or the first `times`). */
  hits(): Promise<number>;
  /** Drops the trigger: those writes succeed again. */
  remove(): Promise<void>;
}

/**
 * Makes the writes to `table` for which `when` holds (SQL over NEW and OLD) fail inside
 * Postgres, the first `times` of them or all. `transient` raises SQLSTATE 57P03 ("cannot
 * connect now", what a restarting server answers), which the service retries; otherwise a plain
 * error (P0001), which it does not. The hit counter is a sequence: it survives the rollback of
 * the failed transaction.
 */
export async function injectFault(databaseUrl: string, table: string, when: string, options: { transient: boolean; times?: number; on?: 'INSERT' | 'UPDATE' }): Promise<InjectedFault> {
  const name = `fault_${randomBytes(4).toString('hex')}`;
  const code = options.transient ? '57P03' : 'P0001';
  const limit = options.times ?? 'NULL';
  await sql(databaseUrl, [
    `CREATE SEQUENCE ${name}`,
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF (${when}) THEN
           IF nextval('${name}') <= coalesce(${limit}, 9223372036854775807) THEN
             RAISE EXCEPTION 'injected fault on ${table}' USING ERRCODE = '${code}';
           END IF;
         END IF;
         RETURN NEW;
       END $$`,
    `CREATE TRIGGER ${name} BEFORE ${options.on ?? 'INSERT'} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`,
  ]);
  return {
    hits: async () => {
      const [row] = await sql(databaseUrl, [`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS hits FROM ${name}`]);
      return Number(row.hits);
    },
    remove: async () => void (await sql(databaseUrl, [`DROP TRIGGER IF EXISTS ${name} ON ${table}`])),
  };
}

async function sql(url: string, statements: string[]): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements) rows = (await client.query(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

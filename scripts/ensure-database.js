// Creates the database named in DATABASE_URL if it does not exist (migrations need it to).
const { Client } = require('pg');

async function main() {
  const url = new URL(process.env.DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (rowCount === 0) {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    console.error(`created database ${name}`);
  }
  await client.end();
}

main().catch((error) => {
  console.error(`cannot prepare database: ${error.message}`);
  process.exit(1);
});

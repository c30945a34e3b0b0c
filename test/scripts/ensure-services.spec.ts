import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'ensure-services.sh');
/** What the script needs of a machine besides what it may install: bash and coreutils. */
const TOOLS = ['bash', 'dirname', 'seq', 'sleep', 'id', 'grep', 'ls', 'sort', 'tail', 'sed', 'cat', 'mkdir', 'chmod'];
/** Nothing listens here: services "missing". */
const ABSENT = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5999/starlab', REDIS_URL: 'redis://127.0.0.1:6999' };

/**
 * scripts/ensure-services.sh on a machine made of a PATH: only bash and coreutils, plus stubs for
 * apt-get, docker and the services' commands that record how they were called. The services are
 * pointed at ports where nothing listens, so the route the script takes is what is tested; the
 * shared PostgreSQL and Redis of this machine are never touched.
 */
describe('scripts/ensure-services.sh', () => {
  let dir: string;
  let bin: string;
  let etc: string;
  const log = () => (existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8') : '');
  const stub = (name: string, body = '') => {
    writeFileSync(join(bin, name), `#!/bin/bash\necho "${name} $*" >> ${join(dir, 'calls')}\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  const run = (env: Record<string, string>): Promise<{ code: number; stderr: string }> =>
    new Promise((resolve) =>
      execFile('/bin/bash', [SCRIPT], { env: { PATH: bin, STARLAB_SERVICES_WAIT_S: '1', STARLAB_PG_ETC: etc, ...env } }, (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr })),
    );

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ensure-services-'));
    bin = join(dir, 'bin');
    etc = join(dir, 'etc-postgresql');
    mkdirSync(bin);
    for (const tool of TOOLS) for (const where of ['/usr/bin', '/bin']) if (existsSync(join(where, tool)) && !existsSync(join(bin, tool))) symlinkSync(join(where, tool), join(bin, tool));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('does nothing when both answer', async () => {
    expect(await run({})).toEqual({ code: 0, stderr: '' });
    expect(log()).toBe('');
  }, 30_000);

  it('says in one line what to install when it may not install and there is no Docker', async () => {
    const { code, stderr } = await run(ABSENT);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'StarLab needs PostgreSQL 15 or later on 127.0.0.1:5999 and Redis 7 or later on 127.0.0.1:6999: run this as root on Debian or Ubuntu (it installs them), or install Docker with the compose plugin, or install them yourself and set DATABASE_URL and REDIS_URL.\n',
    );
  }, 30_000);

  it('installs both from the distribution’s packages, lets local connections in, and starts them', async () => {
    // apt-get "installs": the cluster's configuration as Debian writes it, and the services' commands.
    stub('apt-get', `[ "$1" = install ] || exit 0\nmkdir -p ${etc}/15/main\nprintf 'local all postgres peer\\nhost all all 127.0.0.1/32 scram-sha-256\\nhost all all ::1/128 scram-sha-256\\n' > ${etc}/15/main/pg_hba.conf\nfor c in pg_ctlcluster redis-server; do printf '#!/bin/bash\\necho "%s $*" >> ${join(dir, 'calls')}\\n' $c > ${bin}/$c; chmod +x ${bin}/$c; done`);
    const { code, stderr } = await run(ABSENT);
    expect(log().trim().split('\n')).toEqual([
      'apt-get update -qq',
      'apt-get install -y -qq postgresql redis-server',
      'pg_ctlcluster --skip-systemctl-redirect 15 main start',
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6999 --save  --appendonly no',
    ]);
    expect(readFileSync(join(etc, '15/main/pg_hba.conf'), 'utf8')).toBe('local all postgres peer\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n');
    // Nothing really listens on the test's ports, so it ends saying so.
    expect(code).toBe(1);
    expect(stderr).toContain('ensure-services: installing postgresql redis-server from the distribution');
    expect(stderr).toContain('still does not answer after installing and starting them');
  }, 30_000);

  it('starts stopped services that are installed, without installing anything', async () => {
    mkdirSync(join(etc, '16', 'main'), { recursive: true });
    stub('pg_ctlcluster');
    stub('redis-server');
    stub('apt-get');
    await run(ABSENT);
    expect(log()).toMatch(/^pg_ctlcluster --skip-systemctl-redirect 16 main start\nredis-server --daemonize yes/);
    expect(log()).not.toContain('apt-get install');
  }, 30_000);

  it('brings them up with docker compose where it may not install but Docker runs', async () => {
    stub('docker', '[ "$2" = version ] && exit 0\nexit 0');
    const { code, stderr } = await run(ABSENT);
    expect(log().trim().split('\n')).toEqual(['docker compose version', 'docker compose -p starlab-services -f docker/compose.yml -f docker/compose.services.yml up -d postgres redis']);
    expect(code).toBe(1);
    expect(stderr).toContain('the docker compose services did not answer on 127.0.0.1:5999 and 127.0.0.1:6999');
  }, 30_000);
});

/**
 * A throwaway PostgreSQL server for tests and benchmarks: Debian `postgresql` binaries
 * (/usr/lib/postgresql/<version>/bin, or $PG_BIN), `initdb` + `pg_ctl` in a fresh temp dir, on a
 * free loopback port, no unix socket outside that dir, trust auth for user `postgres`. As root the
 * binaries run as the `postgres` user (PostgreSQL refuses to run as root). Stopped with `stop()`,
 * and with `pg_ctl stop -m immediate` at process exit if a test forgot.
 *
 * Skipping: outside CI a missing installation skips the PostgreSQL tests with a clear reason;
 * with CI=true it is a failure (CI installs the package).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgServer {
  host: string;
  port: number;
  dir: string;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** CREATE DATABASE with a fresh name; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stop the server (fast: `-m immediate`) and remove its directory. */
  stop(): Promise<void>;
  /** Kill the server (`-m immediate`) but keep its data: clients lose their connections. */
  halt(): void;
  /** Start a halted server again on the same port. */
  resume(): void;
}

const inCi = (): boolean => /^(1|true)$/i.test(process.env.CI ?? '');

/** The directory holding initdb and pg_ctl, or undefined. */
export function pgBinDir(): string | undefined {
  // PG_BIN, when set, is the only place looked at (PG_BIN=/nonexistent shows the skip path).
  const candidates: string[] = [];
  if (process.env.PG_BIN !== undefined) candidates.push(process.env.PG_BIN);
  const base = '/usr/lib/postgresql';
  if (process.env.PG_BIN === undefined && existsSync(base)) {
    for (const v of readdirSync(base).sort((a, b) => Number(b) - Number(a))) candidates.push(join(base, v, 'bin'));
  }
  return candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
}

/**
 * The `skip` option for PostgreSQL tests: false when the binaries are present (or under CI=true,
 * where a missing installation must fail the run), otherwise the reason printed as the TAP skip.
 */
export function pgSkip(): string | false {
  if (pgBinDir() !== undefined || inCi()) return false;
  return 'PostgreSQL binaries not found (install Debian `postgresql`, or set PG_BIN to the directory of initdb and pg_ctl): PostgreSQL store tests skipped outside CI';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => {
        resolve(port);
      });
    });
  });
}

function runAs(user: { uid: number; gid: number } | undefined, file: string, args: string[]): void {
  const [cmd, argv] = user === undefined ? [file, args] : ['runuser', ['-u', 'postgres', '--', file, ...args]];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

let databases = 0;

/** initdb + pg_ctl start in a temp dir (about 2–3 s). Extra `-c` settings may be passed. */
export async function startPgServer(settings: Record<string, string> = {}): Promise<PgServer> {
  const bin = pgBinDir();
  if (bin === undefined) {
    throw new Error(
      `PostgreSQL binaries not found${inCi() ? ' and CI=true: .ci/run must install Debian postgresql' : ''} (set PG_BIN or install postgresql)`,
    );
  }
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'aw-pg-'));
  chmodSync(dir, 0o700);
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  runAs(user, join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    max_connections: '300',
    shared_buffers: '64MB',
    ...settings,
  };
  let port = 0;
  const start = (): void => {
    const o = [`-p ${port}`, ...Object.entries(options).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
    runAs(user, join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-o', o, '-w', '-t', '30', 'start']);
  };
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (e) {
      if (attempt >= 3) {
        const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`${(e as Error).message}\n${log}`, { cause: e });
      }
    }
  }
  let stopped = false;
  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    try {
      if (existsSync(join(data, 'postmaster.pid'))) runAs(user, join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', stopSync);
  const url = (database = 'postgres'): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    host: '127.0.0.1',
    port,
    dir,
    url,
    async createDatabase(prefix = 'aw') {
      const name = `${prefix}_${process.pid}_${++databases}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    halt() {
      runAs(user, join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    resume: start,
    stop() {
      process.removeListener('exit', stopSync);
      stopSync();
      return Promise.resolve();
    },
  };
}

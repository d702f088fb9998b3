/**
 * `anchor-witness healthcheck --url URL`: a probe for container HEALTHCHECKs, systemd watchdogs and
 * load balancers that can only run a command. GET `<URL>/health` (or URL itself when it already ends
 * in `/health`); exit 0 when the answer is 200 with a JSON body whose `status` is `"ok"` or
 * `"degraded"` (alive, with the store or a signer down: SPEC §1.1, a liveness check), 1 for
 * anything else (refused connection, timeout, other status, other body). One line on stdout (healthy)
 * or stderr (not), unless `--quiet`. Works for `token-bridge` too: its `/health` has the same
 * `status`. No keys, no store: safe to run as any user, inside a read-only container.
 *
 * `anchor-witness healthcheck --data-dir DIR`: for a node serving only through bastions
 * (`serve --no-listen`, SPEC §5.6), which has no URL to ask: read the bastion state file the node
 * keeps in its data directory (src/bastion/state-file.ts); healthy when it is fresh and at least one
 * bastion is connected.
 */
import { probeBase, probeGet } from './probe-http.ts';
import type { Command } from 'commander';
import { unitArg } from './options.ts';
import { bastionHealth } from '../bastion/state-file.ts';
import { checkReady } from './readiness-check.ts';

export interface HealthResult {
  healthy: boolean;
  /** what to print: `healthy <url> …` or `unhealthy <url>: why` */
  line: string;
  /** The HTTP status of the answer, when there was one. */
  httpStatus?: number;
  /** Milliseconds until the answer, when there was one. */
  elapsedMs?: number;
  /** The /health document, when the answer was JSON. */
  health?: Record<string, unknown>;
}

/** The /health URL for `text`: a base URL gets `/health` appended; a URL ending in /health is kept. */
export function healthUrl(text: string): URL {
  const url = probeBase(text);
  if (!/\/health\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/health`;
  return url;
}

export async function checkHealth(text: string, timeoutMs: number): Promise<HealthResult> {
  const url = healthUrl(text);
  const shown = url.toString();
  const t0 = performance.now();
  let res: { status: number; body: string };
  try {
    res = await probeGet(url, timeoutMs);
  } catch (e) {
    const err = e as Error & { code?: string };
    return { healthy: false, line: `unhealthy ${shown}: ${err.code === 'ETIMEDOUT' ? err.message : (err.code ?? err.message)}` };
  }
  const ms = Math.round(performance.now() - t0);
  const answer = { httpStatus: res.status, elapsedMs: ms };
  if (res.status !== 200) return { healthy: false, line: `unhealthy ${shown}: HTTP ${res.status} after ${ms} ms`, ...answer };
  let doc: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(res.body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    doc = parsed as Record<string, unknown>;
  } catch {
    return { healthy: false, line: `unhealthy ${shown}: the body is not a JSON object`, ...answer };
  }
  const withDoc = { ...answer, health: doc };
  // A liveness check (SPEC §1.1): `degraded` (say the store is down) is alive; restarting would not help.
  if (doc.status !== 'ok' && doc.status !== 'degraded')
    return { healthy: false, line: `unhealthy ${shown}: status ${JSON.stringify(doc.status)}`, ...withDoc };
  const log = doc.log as { size?: unknown } | undefined;
  const store = doc.store as { kind?: unknown; state?: unknown } | undefined;
  const degraded =
    doc.status === 'degraded' ? `, degraded${store?.state === 'down' ? `: the ${String(store.kind)} store is down` : ''}` : '';
  const detail = `${typeof doc.version === 'string' ? `, version ${doc.version}` : ''}${typeof log?.size === 'number' ? `, log size ${log.size}` : ''}${degraded}`;
  return { healthy: true, line: `healthy ${shown} (${ms} ms${detail})`, ...withDoc };
}

/** `healthcheck --json`: the result as one object (snake_case keys, as /health has). */
export function healthJson(r: HealthResult, checked: string): Record<string, unknown> {
  return {
    healthy: r.healthy,
    checked,
    line: r.line,
    ...(r.httpStatus === undefined ? {} : { http_status: r.httpStatus }),
    ...(r.elapsedMs === undefined ? {} : { elapsed_ms: r.elapsedMs }),
    ...(r.health === undefined ? {} : { health: r.health }),
  };
}

export function addHealthcheckCommand(program: Command): void {
  program
    .command('healthcheck')
    .description(
      'exit 0 when the node at --url is healthy (GET /health → 200 {"status":"ok"}), or with --data-dir when a node serving through bastions is connected to one; 1 when it is not',
    )
    .option('--url <url>', "the node's base URL (e.g. http://127.0.0.1:8420) or its /health URL")
    .option(
      '--data-dir <dir>',
      'instead of --url: the data directory of a node started with --bastion (reads its bastion state file); --url wins',
    )
    .option('--timeout-ms <ms>', 'give up after this long (milliseconds, or 5s, 1m)', unitArg('ms', 1, 600_000), 5_000)
    .option('--quiet', 'print nothing; the exit status says it all')
    .option(
      '--json',
      'print one JSON object on stdout instead of the line: {"healthy", "checked", "line"} and, for --url, "http_status", "elapsed_ms", "health" (the /health document)',
    )
    .option(
      '--ready',
      'probe GET /ready instead (protocol §1.1: the store is writable and the signers needed to serve are ok); for load balancers, not for container restarts',
    )
    .action(async (opts: { url?: string; dataDir?: string; timeoutMs: number; quiet?: boolean; json?: boolean; ready?: boolean }) => {
      // --url wins: a container may set AW_DATA_DIR for `serve` and probe with --url.
      let r: HealthResult;
      if (opts.url !== undefined && opts.ready === true) r = await checkReady(opts.url, opts.timeoutMs);
      else if (opts.ready === true) throw new Error('healthcheck --ready needs --url URL');
      else if (opts.url !== undefined) r = await checkHealth(opts.url, opts.timeoutMs);
      else if (opts.dataDir !== undefined) r = bastionHealth(opts.dataDir, Date.now());
      else throw new Error('healthcheck needs --url URL (or --data-dir DIR for a node serving through bastions)');
      if (opts.quiet === true) {
        // nothing: the exit status says it all
      } else if (opts.json === true)
        process.stdout.write(JSON.stringify(healthJson(r, opts.url === undefined ? opts.dataDir! : healthUrl(opts.url).toString())) + '\n');
      else (r.healthy ? process.stdout : process.stderr).write(r.line + '\n');
      process.exitCode = r.healthy ? 0 : 1;
    });
}

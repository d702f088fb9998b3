/** Pieces both `serve` commands share: the --listen syntax and shutdown on SIGTERM/SIGINT. */
import type { Command } from 'commander';
import type { FastifyBaseLogger } from 'fastify';
import { collectList, intArg } from './options.ts';
import { ListenError } from './errors.ts';

/** `HOST:PORT`, IPv6 as `[::1]:PORT`; port 0 = any free port. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(0|[1-9][0-9]{0,4})$/.exec(text);
  if (m === null || Number(m[3]) > 65535)
    throw new ListenError('invalid_listen', `--listen must be HOST:PORT (IPv6 as [::1]:PORT), got ${JSON.stringify(text)}`);
  return { host: m[1] ?? m[2]!, port: Number(m[3]) };
}

/** On SIGTERM or SIGINT: log, drain and close, then exit 0 (1 when closing fails). */
export function closeOnSignals(close: () => Promise<void>, log: FastifyBaseLogger): void {
  const stop = (signal: string): void => {
    log.info({ signal }, 'shutting down: draining requests');
    close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
}

/** The SPEC §2 limit flags, the same on both `serve` commands. */
export function addHttpLimitOptions(cmd: Command): Command {
  return cmd
    .option('--max-body-bytes <n>', 'request body cap', intArg(1))
    .option('--max-in-flight <n>', 'requests in handlers at once', intArg(1))
    .option('--max-queue <n>', 'requests waiting for a slot', intArg(0))
    .option('--request-timeout-ms <n>', 'request deadline from the first byte', intArg(100))
    .option('--max-connections <n>', 'open connections in total', intArg(1))
    .option('--max-connections-per-ip <n>', 'open connections per client IP', intArg(1))
    .option('--trust-proxy <cidr>', 'proxies whose X-Forwarded-For is believed (repeatable, comma-separated)', collectList);
}

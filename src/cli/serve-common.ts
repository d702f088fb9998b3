/** Pieces both `serve` commands share: the --listen syntax and shutdown on SIGTERM/SIGINT. */
import type { FastifyBaseLogger } from 'fastify';
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

/** The SPEC §2 limit flags, one table for both `serve` commands (src/config/option-table.ts). */
import { checkTable, int, list, time, type OptionValues } from '../config/option-table.ts';
import type { HttpLimits } from './limits.ts';

export const HTTP_LIMIT_OPTIONS = checkTable({
  maxBodyBytes: int('--max-body-bytes <n>', 'request body cap, in bytes', 'http', [1]),
  maxInFlight: int('--max-in-flight <n>', 'requests in handlers at once', 'http', [1]),
  maxQueue: int('--max-queue <n>', 'requests waiting for a slot', 'http', [0]),
  requestTimeoutMs: time(
    '--request-timeout-ms <ms>',
    'request deadline from the first byte (milliseconds, or 10s, 1m, …)',
    'http',
    'ms',
    [100],
  ),
  maxConnections: int('--max-connections <n>', 'open connections in total', 'http', [1]),
  maxConnectionsPerIp: int('--max-connections-per-ip <n>', 'open connections per client IP', 'http', [1]),
  trustProxy: list('--trust-proxy <cidr>', 'proxies whose X-Forwarded-For is believed (repeatable, comma-separated)', 'http'),
});

/** The limits given (unset ones keep the server defaults). */
export function httpLimits(v: OptionValues<typeof HTTP_LIMIT_OPTIONS>): HttpLimits {
  return {
    maxBodyBytes: v.maxBodyBytes,
    maxInFlight: v.maxInFlight,
    maxQueue: v.maxQueue,
    requestTimeoutMs: v.requestTimeoutMs,
    maxConnections: v.maxConnections,
    maxConnectionsPerIp: v.maxConnectionsPerIp,
    trustProxy: v.trustProxy,
  };
}

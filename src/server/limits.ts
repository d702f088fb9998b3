/** The SPEC §2 limits both servers take from their configuration (flags `--max-body-bytes` …). */
import type { ServerOptions } from './options.ts';

export const HTTP_LIMIT_KEYS = [
  'maxBodyBytes',
  'maxInFlight',
  'maxQueue',
  'requestTimeoutMs',
  'maxConnections',
  'maxConnectionsPerIp',
  'trustProxy',
] as const;

export interface HttpLimits {
  maxBodyBytes?: number;
  maxInFlight?: number;
  maxQueue?: number;
  requestTimeoutMs?: number;
  maxConnections?: number;
  maxConnectionsPerIp?: number;
  trustProxy?: string[];
}

/** The limits that are set, as createServer options (unset ones keep the server defaults). */
export function httpLimitOptions(config: HttpLimits): Partial<ServerOptions> {
  const out: Record<string, unknown> = {};
  for (const k of HTTP_LIMIT_KEYS) if (config[k] !== undefined) out[k] = config[k];
  return out;
}

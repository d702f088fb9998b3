/**
 * `--bastion HOST:PORT` (SPEC §5.6): a DNS name or an IP address (IPv6 in brackets) and a port
 * 1–65535. HOST is what the bastion's certificate must name (and the SNI, for a DNS name); the text
 * `HOST:PORT` is the `addr` of /health, the metrics and the state file.
 */
import { isIP } from 'node:net';
import { BastionConfigError } from './errors.ts';

export interface BastionAddress {
  readonly host: string;
  readonly port: number;
  /** `HOST:PORT` as given (IPv6 as `[::1]:443`) */
  readonly addr: string;
}

const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

export function parseBastionAddress(text: string): BastionAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([1-9][0-9]{0,4})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  const ok =
    m !== null && host !== undefined && port <= 65535 && (m[1] !== undefined ? isIP(host) === 6 : isIP(host) === 4 || DNS_NAME.test(host));
  if (!ok)
    throw new BastionConfigError(
      'invalid_bastion',
      `--bastion must be HOST:PORT (IPv6 as [::1]:PORT, port 1–65535), got ${JSON.stringify(text)}`,
    );
  return { host: host.toLowerCase(), port, addr: text };
}

/** Parse every --bastion value; one bastion named twice is refused (one connection per bastion). */
export function parseBastionAddresses(texts: readonly string[]): BastionAddress[] {
  const out: BastionAddress[] = [];
  const seen = new Set<string>();
  for (const t of texts) {
    const a = parseBastionAddress(t);
    const key = `${a.host}:${a.port}`;
    if (seen.has(key)) throw new BastionConfigError('invalid_bastion', `--bastion ${t} is given twice (one connection per bastion)`);
    seen.add(key);
    out.push(a);
  }
  return out;
}

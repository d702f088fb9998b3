/**
 * IP addresses, CIDR ranges and the client-IP rule of SPEC §2.
 *
 * Every address is held as 16 bytes: IPv4 `a.b.c.d` is stored as the IPv4-mapped IPv6 address
 * `::ffff:a.b.c.d`, and an IPv4 range `a.b.c.d/n` as `::ffff:a.b.c.d/(96+n)`. One comparison then
 * covers IPv4, IPv6 and IPv4-mapped IPv6 peers (`::ffff:127.0.0.1` from a dual-stack socket matches
 * `127.0.0.0/8`). Zone identifiers (`fe80::1%eth0`) are ignored.
 *
 * Client IP: the socket peer, unless trusted-proxy ranges are configured and the peer is inside one;
 * then the right-most `X-Forwarded-For` entry that is not inside them. Entries may carry a port
 * (`1.2.3.4:5678`, `[2001:db8::1]:443`). If the walk meets an entry that is not an IP address, the
 * last trusted hop is used (a proxy we trust wrote garbage; we do not let that string become a
 * client identity). If every entry is trusted, the left-most one is used.
 */
import { ServerConfigError } from './errors.ts';

export type IpBytes = Uint8Array;

const V4_RE =
  /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const HEX_GROUP_RE = /^[0-9a-fA-F]{1,4}$/;

function parseV4Octets(text: string): number[] | null {
  const m = V4_RE.exec(text);
  if (m === null) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
}

function parseV6(text: string): IpBytes | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (s.length < 2) return null;
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) counts as two groups.
  let tail: number[] = [];
  if (s.includes('.')) {
    const lastColon = s.lastIndexOf(':');
    const v4 = parseV4Octets(s.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    s = s.slice(0, lastColon + 1); // keep a trailing '::', drop a single trailing ':'
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!HEX_GROUP_RE.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0]!);
  if (head === null) return null;
  let groups: number[];
  if (halves.length === 2) {
    const rest = parseGroups(halves[1]!);
    if (rest === null) return null;
    const fill = 8 - head.length - rest.length - tail.length;
    if (fill < 1) return null; // '::' stands for at least one zero group
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest, ...tail];
  } else {
    groups = [...head, ...tail];
  }
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Parse an IPv4 or IPv6 address (no port, no brackets) into 16 bytes; null if it is not one. */
export function parseIp(text: string): IpBytes | null {
  const v4 = parseV4Octets(text);
  if (v4 !== null) return mapV4(v4);
  if (!text.includes(':')) return null;
  return parseV6(text);
}

function mapV4(octets: readonly number[]): IpBytes {
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(octets, 12);
  return out;
}

/** True for IPv4 and IPv4-mapped IPv6 addresses. */
export function isV4Mapped(ip: IpBytes): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

/** Canonical text: dotted quad for IPv4 (and IPv4-mapped IPv6), RFC 5952 for IPv6. */
export function formatIp(ip: IpBytes): string {
  if (isV4Mapped(ip)) return `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((ip[2 * i]! << 8) | ip[2 * i + 1]!);
  // Longest run of at least two zero groups, the first one on ties (RFC 5952 §4.2).
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Canonical text of an address, or null when `text` is not an IP address. */
export function normalizeIp(text: string): string | null {
  const ip = parseIp(text);
  return ip === null ? null : formatIp(ip);
}

/**
 * The key a client is counted under for per-IP limits (connections, rate limit): the address for
 * IPv4, the /64 prefix for IPv6 (one subscriber usually holds a whole /64, so per-address keys would
 * let one host open 2^64 buckets).
 */
export function clientKey(ip: IpBytes): string {
  if (isV4Mapped(ip)) return formatIp(ip);
  const prefix = new Uint8Array(16);
  prefix.set(ip.subarray(0, 8));
  return `${formatIp(prefix)}/64`;
}

export interface Cidr {
  readonly base: IpBytes; // host bits cleared
  readonly bits: number; // prefix length over the 128-bit form
}

/** Parse `addr/len` (or a bare address = a single host). IPv4 lengths are 0..32, IPv6 0..128. */
export function parseCidr(text: string): Cidr {
  const t = text.trim();
  const slash = t.indexOf('/');
  const addrText = slash === -1 ? t : t.slice(0, slash);
  const ip = parseIp(addrText);
  const isV4 = parseV4Octets(addrText) !== null;
  if (ip === null) throw new ServerConfigError('invalid_cidr', `not an IP address or CIDR range: ${JSON.stringify(text)}`);
  let bits = 128;
  if (slash !== -1) {
    const lenText = t.slice(slash + 1);
    const max = isV4 ? 32 : 128;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(lenText) || Number(lenText) > max) {
      throw new ServerConfigError('invalid_cidr', `bad prefix length in ${JSON.stringify(text)} (0..${max})`);
    }
    bits = isV4 ? 96 + Number(lenText) : Number(lenText);
  }
  const base = new Uint8Array(ip);
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    base[i] = base[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return { base, bits };
}

export function cidrContains(cidr: Cidr, ip: IpBytes): boolean {
  let bits = cidr.bits;
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== cidr.base[i]) return false;
  }
  return true;
}

/** A set of CIDR ranges. */
export class CidrSet {
  readonly ranges: readonly Cidr[];
  constructor(ranges: Iterable<string>) {
    this.ranges = [...ranges].map(parseCidr);
  }
  get size(): number {
    return this.ranges.length;
  }
  contains(ip: IpBytes): boolean {
    for (const r of this.ranges) if (cidrContains(r, ip)) return true;
    return false;
  }
}

/** Strip a port and brackets from one X-Forwarded-For entry and parse it. */
export function parseForwardedEntry(entry: string): IpBytes | null {
  const e = entry.trim();
  if (e.startsWith('[')) {
    const close = e.indexOf(']');
    if (close === -1) return null;
    const rest = e.slice(close + 1);
    if (rest !== '' && !/^:[0-9]{1,5}$/.test(rest)) return null;
    return parseV6(e.slice(1, close));
  }
  const v4port = /^([0-9.]+):[0-9]{1,5}$/.exec(e);
  if (v4port !== null) {
    const v4 = parseV4Octets(v4port[1]!);
    return v4 === null ? null : mapV4(v4);
  }
  return parseIp(e);
}

/**
 * The client address under SPEC §2's rule. `peer` is the socket's remote address (as Node reports
 * it), `forwardedFor` the X-Forwarded-For header value(s).
 */
export function resolveClientIp(
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: CidrSet | null,
): IpBytes {
  const peerIp = (peer === undefined ? null : parseIp(peer)) ?? new Uint8Array(16); // `::` when unknown (socket gone)
  if (trusted === null || trusted.size === 0 || !trusted.contains(peerIp)) return peerIp;
  if (forwardedFor === undefined) return peerIp;
  const joined = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
  const entries = joined.split(',');
  let hop = peerIp;
  for (let i = entries.length - 1; i >= 0; i--) {
    const text = entries[i]!.trim();
    if (text === '') continue;
    const ip = parseForwardedEntry(text);
    if (ip === null) return hop;
    if (!trusted.contains(ip)) return ip;
    hop = ip;
  }
  return hop;
}

/**
 * The issuer URL (SPEC §7): `https://host[/path]` with no port, user info, query, fragment or
 * trailing slash, written in canonical form (so `iss`, the discovery URL and what a relying party
 * computes from the provider URL are the same bytes). Only `--dev`, and only for a loopback host
 * (localhost, 127.0.0.0/8, ::1), allows `http://` and a port.
 */
import { isLoopbackHost } from '../encoding/host.ts';
import { BridgeConfigError } from './errors.ts';

export interface IssuerInfo {
  readonly issuer: string;
  /** The path part ('' or '/a/b'), where the OIDC routes are served besides the root. */
  readonly pathPrefix: string;
  readonly loopback: boolean;
}

export { isLoopbackHost };

function fail(issuer: string, why: string): never {
  throw new BridgeConfigError('invalid_issuer', `--issuer ${JSON.stringify(issuer)}: ${why}`);
}

export function validateIssuer(issuer: string, dev: boolean): IssuerInfo {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return fail(issuer, 'not a URL');
  }
  const loopback = isLoopbackHost(url.hostname);
  const relaxed = dev && loopback;
  if (url.protocol !== 'https:' && !(relaxed && url.protocol === 'http:')) {
    fail(
      issuer,
      dev
        ? 'must be https:// (http:// only on a loopback host)'
        : 'must be https:// (http:// is allowed only with --dev on a loopback host)',
    );
  }
  if (url.username !== '' || url.password !== '') fail(issuer, 'must not contain user info');
  if (url.port !== '' && !relaxed) fail(issuer, 'must not contain a port (a port is allowed only with --dev on a loopback host)');
  if (issuer.includes('?') || issuer.includes('#')) fail(issuer, 'must not contain a query or fragment');
  if (issuer.endsWith('/')) fail(issuer, 'must not end with a slash');
  const canonical = url.pathname === '/' ? url.href.slice(0, -1) : url.href;
  if (canonical !== issuer) fail(issuer, `must be written in canonical form: ${canonical}`);
  return { issuer, pathPrefix: url.pathname === '/' ? '' : url.pathname, loopback };
}

/**
 * `token-bridge check-token` (SPEC §8), pure: decode a bridge token (no signature check) and judge
 * it against what the bridge issues (SPEC §7) and what AWS STS `AssumeRoleWithWebIdentity` needs —
 * the thing to run when STS answers `InvalidIdentityToken`. Each finding names the STS error the
 * problem usually surfaces as.
 *
 * Checks: compact JWS form; header `alg` RS256/ES256 with a `kid`; no `azp` (AWS takes `azp` as the
 * audience when present); `aud` one string, equal to the expected audience; `sub` a did:keri or
 * did:key; `iss` in the bridge's issuer form (https, no port, query, fragment or trailing slash)
 * and equal to `--issuer` when given; `iat`/`nbf`/`exp` integers in order, a lifetime within the
 * bridge's maximum, not used before `nbf`/`iat`, and not expired — AWS accepts a token until
 * `exp` + 300 s.
 */
import { validateIssuer } from '../bridge/issuer.ts';
import { MAX_TTL_LIMIT_SECONDS, NBF_BACKDATE_SECONDS } from '../bridge/decide.ts';
import { DID_KERI } from '../bridge/root.ts';
import { AWS_EXP_LEEWAY_SECONDS, AWS_STS_AUDIENCE, isBridgeSubject } from './aws.ts';
import { FederationError } from './errors.ts';
import type { Severity } from './lint.ts';

export interface TokenFinding {
  id: string;
  severity: Severity;
  message: string;
  /** What STS usually answers for this problem. */
  sts?: string;
}

export interface TokenCheck {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  findings: TokenFinding[];
  errors: number;
  warnings: number;
}

export interface TokenCheckOptions {
  /** The expected issuer (byte for byte). */
  issuer?: string;
  /** The expected audience, or several of which the token's must be one (default sts.amazonaws.com). */
  audience?: string | readonly string[];
  /** unix seconds */
  now: number;
}

const STS_INVALID = 'InvalidIdentityToken';
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

function unparsable(message: string): never {
  throw new FederationError('token_unparsable', message);
}

function decodePart(part: string, what: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]+$/.test(part)) unparsable(`the ${what} is not base64url`);
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    unparsable(`the ${what} is not base64url JSON`);
  }
  if (!isObj(v)) unparsable(`the ${what} is not a JSON object`);
  return v;
}

/**
 * The token text from what a user pastes or pipes: a compact JWT, optionally with `Bearer `, or the
 * `/token` JSON response (`{"access_token": …}`).
 */
export function tokenFromInput(text: string): string {
  const t = text.trim();
  if (t.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(t);
    } catch {
      unparsable('input starts with "{" but is not JSON');
    }
    if (isObj(doc) && typeof doc.access_token === 'string') return doc.access_token;
    unparsable('JSON input without an "access_token" string');
  }
  return t.replace(/^Bearer\s+/i, '');
}

export function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const parts = token.split('.');
  if (parts.length !== 3)
    unparsable(`a JWT has three dot-separated parts, got ${parts.length} (STS: "The ID Token provided is not a valid JWT")`);
  const header = decodePart(parts[0]!, 'header');
  const claims = decodePart(parts[1]!, 'payload');
  if (parts[2] === '') unparsable('the signature part is empty (an unsigned token)');
  return { header, claims };
}

export function checkToken(text: string, opts: TokenCheckOptions): TokenCheck {
  const token = tokenFromInput(text);
  const { header, claims } = decodeJwt(token);
  const findings: TokenFinding[] = [];
  const err = (id: string, message: string, sts = STS_INVALID): void => {
    findings.push({ id, severity: 'error', message, sts });
  };
  const warn = (id: string, message: string, sts?: string): void => {
    findings.push({ id, severity: 'warning', message, ...(sts === undefined ? {} : { sts }) });
  };

  // header
  if (header.alg !== 'RS256' && header.alg !== 'ES256')
    err('alg', `header alg ${JSON.stringify(header.alg)}: the bridge signs with RS256 (or ES256)`);
  if (typeof header.kid !== 'string' || header.kid === '')
    err(
      'kid',
      'header has no kid: STS picks the verification key from the JWKS by kid',
      `${STS_INVALID} ("Couldn't retrieve verification key from your identity provider")`,
    );
  if (header.typ !== undefined && header.typ !== 'JWT') warn('typ', `header typ ${JSON.stringify(header.typ)} (the bridge writes "JWT")`);

  // azp
  if ('azp' in claims)
    err(
      'azp',
      `the token has an azp claim (${JSON.stringify(claims.azp)}): AWS uses azp as the audience when present and ignores aud; the bridge never issues azp`,
      `${STS_INVALID} ("Incorrect token audience")`,
    );

  // aud
  const expectedAud: readonly string[] =
    opts.audience === undefined ? [AWS_STS_AUDIENCE] : typeof opts.audience === 'string' ? [opts.audience] : opts.audience;
  if (claims.aud === undefined)
    err(
      'aud_missing',
      "no aud claim: STS matches aud against the provider's client ID list",
      `${STS_INVALID} ("Incorrect token audience")`,
    );
  else if (typeof claims.aud !== 'string')
    err(
      'aud_not_string',
      `aud is ${JSON.stringify(claims.aud)}: the bridge issues exactly one audience, as a string`,
      `${STS_INVALID} ("Incorrect token audience")`,
    );
  else if (!expectedAud.includes(claims.aud))
    err(
      'aud_unexpected',
      `aud is ${JSON.stringify(claims.aud)}, expected ${expectedAud.map((a) => JSON.stringify(a)).join(' or ')}: the provider's client ID list and the trust policy's P:aud must name the token's audience`,
      `${STS_INVALID} ("Incorrect token audience")`,
    );

  // sub
  if (typeof claims.sub !== 'string')
    err(
      'sub_missing',
      'no sub claim (string): the trust policy pins P:sub',
      'AccessDenied ("Not authorized to perform sts:AssumeRoleWithWebIdentity")',
    );
  else if (!isBridgeSubject(claims.sub))
    err(
      'sub_not_did',
      `sub ${JSON.stringify(claims.sub)} is not a did:keri or did:key (the bridge's sub is the chain's root DID)`,
      'AccessDenied ("Not authorized to perform sts:AssumeRoleWithWebIdentity")',
    );
  else if (
    claims.sub.startsWith(DID_KERI) &&
    claims.keri_prefix !== undefined &&
    claims.keri_prefix !== claims.sub.slice(DID_KERI.length)
  ) {
    warn('keri_prefix', `keri_prefix ${JSON.stringify(claims.keri_prefix)} does not match sub`);
  }

  // iss
  if (typeof claims.iss !== 'string') {
    err('iss_missing', 'no iss claim (string)', `${STS_INVALID} ("No OpenIDConnect provider found in your account for …")`);
  } else {
    try {
      validateIssuer(claims.iss, false);
    } catch (e) {
      err(
        'iss_form',
        `iss ${(e as Error).message.replace(/^--issuer /, '')}: IAM looks the provider up by this exact URL`,
        `${STS_INVALID} ("No OpenIDConnect provider found in your account for ${claims.iss}")`,
      );
    }
    if (opts.issuer !== undefined && claims.iss !== opts.issuer) {
      err(
        'iss_unexpected',
        `iss is ${JSON.stringify(claims.iss)}, expected ${JSON.stringify(opts.issuer)} (byte for byte: the IAM provider URL must be exactly the issuer)`,
        `${STS_INVALID} ("No OpenIDConnect provider found in your account for ${claims.iss}")`,
      );
    }
  }

  // lifetime
  const now = opts.now;
  const { iat, nbf, exp } = claims;
  if (!isInt(exp)) err('exp_missing', 'no exp claim (integer seconds)');
  if (!isInt(iat)) err('iat_missing', 'no iat claim (integer seconds)');
  if (nbf !== undefined && !isInt(nbf)) err('nbf_form', `nbf ${JSON.stringify(nbf)} is not integer seconds`);
  if (isInt(exp) && isInt(iat)) {
    if (exp <= iat) err('lifetime', `exp (${iso(exp)}) is not after iat (${iso(iat)})`);
    else if (exp - iat > MAX_TTL_LIMIT_SECONDS)
      warn(
        'lifetime',
        `lifetime ${exp - iat} s exceeds the bridge's maximum of ${MAX_TTL_LIMIT_SECONDS} s: not a token this bridge issues`,
      );
    if (isInt(nbf) && nbf !== iat - NBF_BACKDATE_SECONDS)
      warn('nbf', `nbf is ${nbf}, the bridge writes iat − ${NBF_BACKDATE_SECONDS} (${iat - NBF_BACKDATE_SECONDS})`);
  }
  if (isInt(iat) && iat > now + AWS_EXP_LEEWAY_SECONDS)
    err('iat_future', `iat ${iso(iat)} is ${iat - now} s in the future: check the clocks of the bridge and of this machine`);
  if (isInt(nbf) && nbf > now + AWS_EXP_LEEWAY_SECONDS)
    err('nbf_future', `nbf ${iso(nbf)} is ${nbf - now} s in the future: the token is not valid yet`);
  if (isInt(exp)) {
    const hardLimit = exp + AWS_EXP_LEEWAY_SECONDS;
    if (now > hardLimit) {
      err(
        'expired',
        `expired at ${iso(exp)}; AWS accepts a token until exp + ${AWS_EXP_LEEWAY_SECONDS} s (${iso(hardLimit)}), ${now - hardLimit} s ago: get a new token`,
        'ExpiredTokenException ("Token expired: current date/time … must be before the expiration date/time …")',
      );
    } else if (now > exp) {
      warn(
        'expiring',
        `past exp (${iso(exp)}): AWS still accepts it for ${hardLimit - now} s (until exp + ${AWS_EXP_LEEWAY_SECONDS} s), other relying parties may not`,
      );
    }
  }

  // bridge-specific
  if (claims.pop === false)
    warn('pop_off', 'issued without proof of possession ("pop": false): whoever held a copy of the chain could have minted it');
  if (claims.capabilities !== undefined && !(Array.isArray(claims.capabilities) && claims.capabilities.every((c) => typeof c === 'string')))
    warn('capabilities', 'capabilities is not a list of strings');
  if (typeof claims.jti !== 'string') warn('jti', 'no jti claim');

  const errors = findings.filter((f) => f.severity === 'error').length;
  return { header, claims, findings, errors, warnings: findings.length - errors };
}

/** Human-readable report: the decoded claims that matter, then the findings. */
export function formatTokenCheck(r: TokenCheck, now: number): string {
  const c = r.claims;
  const lines: string[] = [];
  const show = (k: string, v: unknown): void => {
    if (v !== undefined) lines.push(`  ${k.padEnd(4)} ${JSON.stringify(v)}`);
  };
  lines.push(`header: alg ${JSON.stringify(r.header.alg)} kid ${JSON.stringify(r.header.kid)}`);
  lines.push('claims:');
  for (const k of ['iss', 'sub', 'aud', 'azp']) show(k, c[k]);
  for (const k of ['iat', 'nbf', 'exp']) {
    const v = c[k];
    if (isInt(v))
      lines.push(`  ${k.padEnd(4)} ${v} (${iso(v)}, ${v >= now ? 'in ' + String(v - now) + ' s' : String(now - v) + ' s ago'})`);
    else show(k, v);
  }
  for (const f of r.findings) lines.push(`${f.severity} [${f.id}]: ${f.message}${f.sts === undefined ? '' : `\n    STS: ${f.sts}`}`);
  lines.push(
    r.errors === 0
      ? `ok: ${r.warnings === 0 ? 'no findings' : `${r.warnings} warning(s)`}`
      : `${r.errors} error(s), ${r.warnings} warning(s)`,
  );
  return lines.join('\n') + '\n';
}

/**
 * The OIDC provider thumbprint (SPEC §8): SHA-1 of the DER of the **last** certificate of the chain
 * the jwks_uri host presents (the certificate itself when it is self-signed), 40 lowercase hex
 * characters without colons — what `openssl x509 -fingerprint -sha1 -noout` prints, lowercased and
 * without the colons. This is AWS's documented procedure (`openssl s_client -showcerts`, take the
 * last certificate shown). Pure: certificates in, thumbprints and warnings out.
 */
import { X509Certificate } from 'node:crypto';
import { FederationError } from './errors.ts';
import { MAX_THUMBPRINTS } from './aws.ts';

const PEM_CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
export const THUMBPRINT_RE = /^[0-9a-f]{40}$/;

/** `AB:CD:…` (X509Certificate.fingerprint) → `abcd…`. */
export function thumbprintOf(cert: X509Certificate): string {
  return cert.fingerprint.replace(/:/g, '').toLowerCase();
}

/** Every certificate of a PEM file, in file order (other PEM blocks, such as keys, are ignored). */
export function parseCertificateChain(pem: string, source: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERT_RE) ?? [];
  if (blocks.length === 0) throw new FederationError('certificate_unreadable', `${source}: no -----BEGIN CERTIFICATE----- block`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new FederationError('certificate_unreadable', `${source}: certificate ${i + 1} cannot be parsed: ${(e as Error).message}`);
    }
  });
}

export interface ChainThumbprint {
  thumbprint: string;
  /** Subject of the certificate the thumbprint is of. */
  subject: string;
  /** How many certificates the chain has. */
  certificates: number;
  warnings: string[];
}

/**
 * Thumbprint of the last certificate of a chain given leaf first (as a server presents it and as a
 * `--tls-cert` chain file is written), with warnings about an out-of-order chain or expired
 * certificates. `now` is unix ms.
 */
export function chainThumbprint(chain: readonly X509Certificate[], now: number): ChainThumbprint {
  const last = chain[chain.length - 1];
  if (last === undefined) throw new FederationError('certificate_unreadable', 'empty certificate chain');
  const warnings: string[] = [];
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i]!.checkIssued(chain[i + 1]!)) {
      warnings.push(
        `certificate ${i + 1} (${chain[i]!.subject.replace(/\n/g, ', ')}) is not issued by certificate ${i + 2}: the chain should be leaf first, then each issuer in turn`,
      );
    }
  }
  chain.forEach((c, i) => {
    if (Date.parse(c.validTo) < now) warnings.push(`certificate ${i + 1} (${c.subject.replace(/\n/g, ', ')}) expired on ${c.validTo}`);
  });
  return { thumbprint: thumbprintOf(last), subject: last.subject.replace(/\n/g, ', '), certificates: chain.length, warnings };
}

/** Normalise an `--extra-thumbprint`: 40 hex characters, colons allowed on input, lowercase out. */
export function normalizeThumbprint(text: string): string {
  const t = text.replace(/:/g, '').toLowerCase();
  if (!THUMBPRINT_RE.test(t))
    throw new FederationError(
      'invalid_thumbprint',
      `thumbprint must be a SHA-1 fingerprint (40 hex characters), got ${JSON.stringify(text)}`,
    );
  return t;
}

/** The thumbprint list: de-duplicated, in order, 1 to 5 entries. */
export function thumbprintList(computed: readonly string[], extra: readonly string[]): string[] {
  const list = [...new Set([...computed.map(normalizeThumbprint), ...extra.map(normalizeThumbprint)])];
  if (list.length === 0) {
    throw new FederationError(
      'no_thumbprint',
      'no thumbprint: give --tls-cert FILE (the chain the bridge serves), --connect (read it from the live TLS handshake), or --extra-thumbprint HEX',
    );
  }
  if (list.length > MAX_THUMBPRINTS)
    throw new FederationError('too_many_thumbprints', `IAM takes at most ${MAX_THUMBPRINTS} thumbprints, got ${list.length}`);
  return list;
}

/**
 * The warning printed with every setup: IAM ignores thumbprints for publicly trusted CAs
 * (it then relies on its own CA store), so the thumbprint matters only for a self-signed or
 * private-CA certificate — and then it must be updated before that top certificate changes.
 */
export const THUMBPRINT_WARNING =
  "IAM ignores the thumbprint when the jwks_uri host's certificate chains to a certificate authority AWS trusts (publicly trusted CAs): it then relies on its own CA store. The thumbprint is used only for self-signed or private-CA certificates; then add the new thumbprint (up to 5) before the top certificate of the chain changes, or STS refuses tokens with \"OpenIDConnect provider's HTTPS certificate doesn't match configured thumbprint\".";

/**
 * TLS material for loopback test servers, made with the openssl CLI (Node cannot make X.509).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';

export interface SelfSignedOptions {
  /** Where the private key (PEM, written 0600) goes. */
  keyFile: string;
  /** Where the certificate (PEM) goes. */
  certFile: string;
  /** The subject CN. */
  host: string;
  /** The subjectAltName extension in openssl syntax (default `DNS:<host>`). */
  subjectAltName?: string;
}

/** A self-signed P-256 certificate for `host`, valid two days. */
export function selfSignedCertificate(o: SelfSignedOptions): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      o.keyFile,
      '-out',
      o.certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${o.host}`,
      '-addext',
      `subjectAltName=${o.subjectAltName ?? `DNS:${o.host}`}`,
    ],
    { stdio: 'ignore' },
  );
  chmodSync(o.keyFile, 0o600);
}

/**
 * The token bridge's listener settings: `--tls-cert`/`--tls-key` checked before the listener needs
 * them, and (dev only) a free port for an issuer that names the listening URL.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { fileProblem, readInputFile } from '../config/input-file.ts';
import { readKeyFile } from '../keys/keyfile.ts';
import { BridgeConfigError } from './errors.ts';

/** A free TCP port on `host` (dev only: the issuer must name the port before the server listens). */
export async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => {
        resolve(port);
      });
    });
  });
}

/**
 * --tls-cert and --tls-key, checked before the listener needs them: each file's problem (and a
 * key that does not belong to the certificate) named by its flag, in plain words.
 */
export function loadTls(certFile: string, keyFile: string): { cert: Buffer; key: string } {
  const coded = (m: string): Error => new BridgeConfigError('invalid_option', m);
  // the key file first: a group- or world-readable private key is refused whatever the certificate
  const key = readInputFile('--tls-key', keyFile, () => readKeyFile(keyFile), coded);
  const cert = readInputFile('--tls-cert', certFile, () => readFileSync(certFile), coded);
  const first = readInputFile('--tls-cert', certFile, () => new X509Certificate(cert), coded);
  const privateKey = readInputFile('--tls-key', keyFile, () => createPrivateKey(key), coded);
  if (!first.checkPrivateKey(privateKey))
    throw new BridgeConfigError('invalid_option', `--tls-key ${keyFile}: not the private key of the certificate in --tls-cert ${certFile}`);
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    throw new BridgeConfigError('invalid_option', `--tls-cert ${certFile} with --tls-key ${keyFile}: ${fileProblem(e, certFile)}`);
  }
  return { cert, key };
}

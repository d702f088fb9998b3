/**
 * A development demo for `token-bridge serve --dev` (and `npm start`): a fresh root key, a 2-link
 * did:key chain root → identity → device with a few capabilities, the device key file, and the
 * command that exchanges them for a token (`token-bridge token`, which signs the proof of
 * possession). Nothing here is used outside development.
 */
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { writeNewKeyFile } from '../keys/keyfile.ts';
import { buildDidKeyChain } from './client.ts';

export interface Demo {
  chainFile: string;
  deviceKeyFile: string;
  rootPublicKey: string;
  subject: string;
  /** A shell command (run from the package directory) that prints the token response. */
  command: string;
}

/** Write the demo into `dir` (which must exist) for a bridge reachable at `bridgeUrl`. */
export function writeDemo(dir: string, bridgeUrl: string, audience: string, cwd: string = process.cwd()): Demo {
  const root = generateEd25519();
  const identity = generateEd25519();
  const device = generateEd25519();
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root.privateKey, [
    {
      deviceKey: identity.privateKey,
      capabilities: ['deploy:staging', 'deploy:production', 'sign_commit'],
      expiresAt: now + 30 * 86400,
      timestamp: now,
      rid: 'demo-identity',
    },
    {
      deviceKey: device.privateKey,
      capabilities: ['deploy:staging', 'sign_commit'],
      expiresAt: now + 7 * 86400,
      timestamp: now,
      rid: 'demo-device',
      signerType: 'Workload',
    },
  ]);
  const chainFile = join(dir, 'demo-chain.json');
  const deviceKeyFile = join(dir, 'demo-device-key.pem');
  writeFileSync(chainFile, JSON.stringify(chain, null, 2) + '\n');
  writeNewKeyFile(deviceKeyFile, ed25519PrivateKeyToPem(device.privateKey));
  const rootPublicKey = encodeHex(ed25519PublicKeyBytes(root.privateKey));
  const rel = (p: string): string => {
    const r = relative(cwd, p);
    return r.startsWith('..') ? p : r;
  };
  const command = `node bin/token-bridge.js token --bridge ${bridgeUrl} --chain ${rel(chainFile)} --root-key ${rootPublicKey} --device-key ${rel(deviceKeyFile)} --audience ${audience}`;
  return { chainFile, deviceKeyFile, rootPublicKey, subject: chain[0]!.issuer, command };
}

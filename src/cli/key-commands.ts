/**
 * Key tools (SPEC §1.1):
 *   anchor-witness key to-openssh --in PEM --out FILE [--comment C]
 *       an Ed25519 PKCS#8 PEM key file → an unencrypted openssh-key-v1 key for `ssh-add` (which
 *       refuses PKCS#8 PEM); written 0600 with O_EXCL; prints the fingerprint.
 *   anchor-witness key fingerprint KEYREF [--p256]
 *       prints the public key hex, the OpenSSH fingerprint (Ed25519) and the KERI `B…` prefix
 *       (Ed25519, non-transferable) of a file, ssh-agent: or pkcs11: reference.
 * `keygen --format openssh` (src/cli/anchor-witness.ts) writes the same file as `to-openssh`.
 */
import type { Command } from 'commander';
import { ed25519PrivateKeyFromPem, ed25519PublicKeyBytes, ed25519Seed, generateEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { encodeQb64 } from '../keri/qb64.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { readRefPublicKey } from '../keys/open-signer.ts';
import { ed25519Fingerprint, ed25519OpensshPrivateKey } from '../keys/openssh.ts';
import type { KeyObject } from 'node:crypto';

/** Write `key` as an openssh-key-v1 file (0600, O_EXCL); returns its fingerprint. */
export function writeOpensshKey(path: string, key: KeyObject, comment: string): string {
  const publicKey = ed25519PublicKeyBytes(key);
  writeNewKeyFile(path, ed25519OpensshPrivateKey(ed25519Seed(key), publicKey, comment));
  return ed25519Fingerprint(publicKey);
}

/** `keygen --format openssh`: a new Ed25519 key written as openssh-key-v1; returns its fingerprint. */
export function keygenOpenssh(path: string, comment: string): string {
  return writeOpensshKey(path, generateEd25519().privateKey, comment);
}

/** The lines `key fingerprint` prints for a public key. */
export function fingerprintLines(publicKey: Uint8Array, algorithm: 'ed25519' | 'p256'): string[] {
  if (algorithm === 'p256') return [`key ${encodeHex(publicKey)}`];
  return [`key ${encodeHex(publicKey)}`, `fingerprint ${ed25519Fingerprint(publicKey)}`, `prefix ${encodeQb64('B', publicKey)}`];
}

export function addKeyCommands(program: Command): void {
  const key = program.command('key').description('key tools: OpenSSH export and fingerprints of key references (docs/keys.md)');
  key
    .command('to-openssh')
    .description('write an Ed25519 PKCS#8 PEM key as an unencrypted openssh-key-v1 key (for ssh-add), mode 0600; prints its fingerprint')
    .requiredOption('--in <file>', 'the PKCS#8 PEM key file (mode 0600)')
    .requiredOption('--out <file>', 'where to write the OpenSSH key (refuses to overwrite)')
    .option('--comment <text>', 'the key comment ssh-add -l shows', 'anchor-witness')
    .action((opts: { in: string; out: string; comment: string }) => {
      const k = ed25519PrivateKeyFromPem(readKeyFile(opts.in));
      process.stdout.write(writeOpensshKey(opts.out, k, opts.comment) + '\n');
    });
  key
    .command('fingerprint')
    .description('print the public key hex, the OpenSSH SHA256 fingerprint and the KERI B… prefix of a key reference')
    .argument('<keyref>', 'a key file, ssh-agent:SHA256:… or pkcs11:… reference')
    .option('--p256', 'the reference names a P-256 key (a bridge ES256 key): print only its compressed hex')
    .action(async (ref: string, opts: { p256?: boolean }) => {
      const algorithm = opts.p256 === true ? 'p256' : 'ed25519';
      const publicKey = await readRefPublicKey(ref, algorithm);
      process.stdout.write(fingerprintLines(publicKey, algorithm).join('\n') + '\n');
    });
}

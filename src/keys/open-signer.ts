/**
 * Resolve a key reference (SPEC §1.1) to a started Signer: a file → FileSigner (PKCS#8 PEM, mode
 * 0600, SPEC §1 rules); `ssh-agent:` → ManagedSigner over the agent (Ed25519 only); `pkcs11:` →
 * ManagedSigner over the token. External signers are started (public key read, one probe
 * signature verified), retried every second for `startTimeoutMs`, else `signer_unavailable`.
 */
import { ed25519PrivateKeyFromPem } from '../crypto/ed25519.ts';
import { p256PrivateKeyFromPem } from '../crypto/p256.ts';
import { KeyRefError } from './errors.ts';
import { FileSigner } from './file-signer.ts';
import { readKeyFile } from './keyfile.ts';
import { Pkcs11Backend } from './pkcs11.ts';
import { parseKeyRef, redactKeyRef } from './ref.ts';
import { ManagedSigner, type ManagedSignerOptions, type Signer, type SignerAlgorithm } from './signer.ts';
import { SshAgentBackend } from './ssh-agent.ts';

export interface OpenSignerOptions extends ManagedSignerOptions {
  readonly algorithm: SignerAlgorithm;
  /** `--pkcs11-sessions` (4). */
  readonly pkcs11Sessions?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export async function openSigner(refText: string, opts: OpenSignerOptions): Promise<Signer> {
  const ref = parseKeyRef(refText);
  if (ref.kind === 'file') {
    const pem = readKeyFile(ref.path);
    const key = opts.algorithm === 'ed25519' ? ed25519PrivateKeyFromPem(pem) : p256PrivateKeyFromPem(pem);
    const signer = new FileSigner(key, '', redactKeyRef(refText), opts.key);
    opts.events?.stateChanged?.(signer.status().key, 'ok');
    return signer;
  }
  if (ref.kind === 'ssh-agent') {
    if (opts.algorithm !== 'ed25519') {
      throw new KeyRefError(
        'key_unsupported',
        `${redactKeyRef(refText)}: an ssh-agent key is Ed25519 only; this key must be ${opts.algorithm}`,
      );
    }
    const signer = await ManagedSigner.start(new SshAgentBackend(ref, refText, opts.env), opts);
    opts.events?.stateChanged?.(signer.status().key, 'ok');
    return signer;
  }
  const signer = await ManagedSigner.start(new Pkcs11Backend(ref, refText, opts.algorithm, opts.pkcs11Sessions ?? 4), opts);
  opts.events?.stateChanged?.(signer.status().key, 'ok');
  return signer;
}

/** True when two signers hold the same public key (one-key-one-purpose compares keys, not references). */
export function sameSignerKey(a: Signer, b: Signer): boolean {
  return a.algorithm === b.algorithm && Buffer.from(a.publicKey).equals(Buffer.from(b.publicKey));
}

/** The public key a reference names, without signing (for `key fingerprint`). */
export async function readRefPublicKey(refText: string, algorithm: SignerAlgorithm, env?: NodeJS.ProcessEnv): Promise<Uint8Array> {
  const ref = parseKeyRef(refText);
  if (ref.kind === 'file') {
    const pem = readKeyFile(ref.path);
    const key = algorithm === 'ed25519' ? ed25519PrivateKeyFromPem(pem) : p256PrivateKeyFromPem(pem);
    return new FileSigner(key, 'key', refText).publicKey;
  }
  const backend = ref.kind === 'ssh-agent' ? new SshAgentBackend(ref, refText, env) : new Pkcs11Backend(ref, refText, algorithm, 1);
  try {
    return await backend.open();
  } finally {
    await backend.close();
  }
}

/**
 * The node's keys, read once at start (SPEC §1): the witness key, the cosign keys and the bastion
 * key, each through `loadKey` (one place where a key reference becomes a key), and "one key, one
 * purpose" checked here only, on PUBLIC keys, one code per condition:
 *
 *   cosign_key_reused      a cosign key is the witness key
 *   cosign_key_duplicate   two --cosign-key references hold one key
 *   bastion_key_reused     the bastion key is the witness key or a cosign key
 *   kel_key_reused         the KERI witness key (--kel-key) is the witness key or a cosign key
 *   next_key_reused        the next witness key (--next-key, SPEC §1.2) is any other key of the node
 *
 *   const keys = NodeKeys.load(config, log);   // before the store opens
 *   keys.witness.privateKey; keys.cosign; keys.bastion?.keyHash
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { bastionKeyHash } from '../crypto/bastion-certificate.ts';
import { ed25519PrivateKeyFromPem, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { signingKeyFromPem, type SigningAlgorithm, type SigningKey } from '../crypto/signing-key.ts';
import { readInputFile } from '../config/input-file.ts';
import { KeyRefError, NodeKeyError } from './errors.ts';
import { isExternalKeyRef, type ExternalSigners } from './external.ts';
import { isSigner, type Signer } from './signer.ts';
import { formatVkey } from '../note/vkey.ts';
import { SIG_TYPE_COSIGNATURE_V1 } from '../note/signed-note.ts';
import { readKeyFile, writeNewKeyFile } from './keyfile.ts';

/** What a key signs; each purpose has its own flag and accepted algorithms. */
export type KeyPurpose = 'witness' | 'cosign' | 'bastion' | 'kel' | 'next';

const FLAG: Readonly<Record<KeyPurpose, string>> = {
  witness: '--key',
  cosign: '--cosign-key',
  bastion: '--bastion-key',
  kel: '--kel-key',
  next: '--next-key',
};

/** `/health` signers' `key` of the witness keys outside the process (SPEC §1.1, §1.2). */
const WITNESS_SIGNER_KEY = { witness: 'witness', next: 'witness_next', kel: 'kel' } as const;

/**
 * A loaded key: its algorithm, its raw public key (compared for one key, one purpose) and the key
 * that signs — a KeyObject in the process, or a Signer outside it (an `ssh-agent:` or `pkcs11:`
 * reference, SPEC §1.1: witness and cosign keys only, Ed25519).
 */
export interface NodeKey extends Omit<SigningKey, 'privateKey'> {
  readonly privateKey: KeyObject | Signer;
  readonly purpose: KeyPurpose;
  /** The reference it was loaded from (today a PKCS#8 PEM file path). */
  readonly ref: string;
}

/**
 * Load one key reference for one purpose: a PKCS#8 PEM file, mode 0600 (src/keys/keyfile.ts). The
 * witness and bastion keys are Ed25519; a cosign key is Ed25519 or ML-DSA-44 (OID, SPEC §5.1).
 * Other reference kinds (issue 31: `ssh-agent:`, `pkcs11:`) plug in here.
 */
export function loadKey(ref: string, purpose: KeyPurpose): NodeKey {
  const flag = FLAG[purpose];
  return readInputFile(flag, ref, () => {
    const pem = readKeyFile(ref);
    if (purpose === 'cosign') return { ...signingKeyFromPem(pem), purpose, ref };
    const privateKey = ed25519PrivateKeyFromPem(pem);
    return { algorithm: 'ed25519' as SigningAlgorithm, privateKey, publicKey: ed25519PublicKeyBytes(privateKey), purpose, ref };
  });
}

/** What NodeKeys.load reads of the node's configuration (src/witness/node.ts WitnessConfig fits). */
export interface NodeKeysConfig {
  dataDir: string;
  /** The witness name (external cosign keys are listed in `/health` by their vkey). */
  name: string;
  dev: boolean;
  roles: readonly string[];
  keyFile?: string | undefined;
  cosignKeyFiles?: readonly string[] | undefined;
  /** The bastion key is read only when bastions are configured. */
  bastions?: readonly string[] | undefined;
  bastionKeyFile?: string | undefined;
  /** The KERI witness key, read with role kel (SPEC §3.6.1). */
  kelKeyFile?: string | undefined;
  /** `--next-key`: the next witness key during a rotation overlap (SPEC §1.2). */
  nextKeyFile?: string | undefined;
}

/** A key in the process: what the parts that need one (TLS, the worker pool) take. */
export function inProcessKey(k: NodeKey): KeyObject | undefined {
  return isSigner(k.privateKey) ? undefined : k.privateKey;
}

/**
 * Resolve one key reference: a file (loadKey), or with `external` an `ssh-agent:`/`pkcs11:` key
 * (SPEC §1.1), opened and probed through the node's signer settings. The bastion key stays a file
 * (TLS signs in the process): an external reference there is refused. The KERI witness key may be
 * external (the KERI role signs through KelIdentity's async `sign`).
 */
export async function resolveKey(ref: string, purpose: KeyPurpose, external: ExternalSigners | undefined, name: string): Promise<NodeKey> {
  if (!isExternalKeyRef(ref)) return loadKey(ref, purpose);
  if (external === undefined || purpose === 'bastion')
    throw new KeyRefError('key_unsupported', `${FLAG[purpose]} takes a key file here, not ${ref.split(':')[0]}: (docs/keys.md)`);
  const label =
    purpose === 'witness' || purpose === 'next' || purpose === 'kel'
      ? WITNESS_SIGNER_KEY[purpose]
      : (pk: Uint8Array) => `cosign:${formatVkey(name, SIG_TYPE_COSIGNATURE_V1, pk)}`;
  const signer = await external.open(ref, label, 'ed25519');
  return { algorithm: 'ed25519', publicKey: signer.publicKey, privateKey: signer, purpose, ref };
}

export interface KeyLogger {
  warn(obj: object, msg: string): void;
}

/** The bastion backend identity (SPEC §5.6). */
export interface BastionIdentity {
  readonly key: KeyObject;
  /** lowercase hex SHA-256 of the 32-byte public key: the path prefix clients use */
  readonly keyHash: string;
}

/** With --dev a missing witness or cosign key is created once in the data dir (and kept). */
function devKeyRef(file: string | undefined, purpose: 'witness' | 'cosign', config: NodeKeysConfig, log: KeyLogger): string {
  if (file !== undefined) return file;
  if (!config.dev)
    throw new NodeKeyError(
      'key_required',
      `the ${purpose} key file is required (${FLAG[purpose]} FILE; create one with: anchor-witness keygen --out FILE)`,
    );
  const devFile = join(config.dataDir, `${purpose}-key.pem`);
  if (!existsSync(devFile)) {
    writeNewKeyFile(devFile, ed25519PrivateKeyToPem(generateEd25519().privateKey));
    log.warn(
      { path: devFile },
      `--dev: generated a ${purpose} key for a first try (kept in the data dir; use ${FLAG[purpose]} for a real deployment)`,
    );
  }
  return devFile;
}

const sameKey = (a: NodeKey, b: NodeKey): boolean => a.algorithm === b.algorithm && Buffer.from(a.publicKey).equals(b.publicKey);

export class NodeKeys {
  readonly witness: NodeKey;
  /** Empty without the cosign role; in --cosign-key order (one cosignature line each). */
  readonly cosign: readonly NodeKey[];
  /** Only with --bastion. */
  readonly bastion: BastionIdentity | undefined;
  /** Only with role kel: the KERI witness key (its non-transferable `B…` prefix). */
  readonly kel: NodeKey | undefined;
  /** Only with --next-key: the next witness key (SPEC §1.2; `/health` signers `witness_next` when external). */
  readonly next: NodeKey | undefined;

  private constructor(
    witness: NodeKey,
    cosign: readonly NodeKey[],
    bastion: NodeKey | undefined,
    kel: NodeKey | undefined,
    next: NodeKey | undefined,
  ) {
    this.witness = witness;
    this.next = next;
    this.cosign = cosign;
    this.kel = kel;
    const bastionKey = bastion === undefined ? undefined : inProcessKey(bastion);
    this.bastion = bastionKey === undefined ? undefined : { key: bastionKey, keyHash: bastionKeyHash(bastionKey) };
  }

  /**
   * Read every key the configuration names, then check that each key serves one purpose. With
   * `external`, `--key` and `--cosign-key` may name keys outside the process (SPEC §1.1).
   */
  static async load(config: NodeKeysConfig, log: KeyLogger, external?: ExternalSigners): Promise<NodeKeys> {
    const witness = await resolveKey(devKeyRef(config.keyFile, 'witness', config, log), 'witness', external, config.name);
    const cosign: NodeKey[] = [];
    if (config.roles.includes('cosign')) {
      const refs = config.cosignKeyFiles ?? [];
      if (refs.length === 0) cosign.push(loadKey(devKeyRef(undefined, 'cosign', config, log), 'cosign'));
      for (const ref of refs) cosign.push(await resolveKey(ref, 'cosign', external, config.name));
    }
    let bastion: NodeKey | undefined;
    if ((config.bastions ?? []).length > 0) {
      if (config.bastionKeyFile === undefined)
        throw new NodeKeyError(
          'key_required',
          '--bastion needs --bastion-key FILE (an Ed25519 key of its own; create one with: anchor-witness keygen --out FILE)',
        );
      bastion = await resolveKey(config.bastionKeyFile, 'bastion', external, config.name);
    }
    let kel: NodeKey | undefined;
    if (config.roles.includes('kel')) {
      if (config.kelKeyFile === undefined)
        throw new NodeKeyError(
          'kel_key_required',
          'role kel needs --kel-key FILE (an Ed25519 key of its own; create one with: anchor-witness keygen --out FILE)',
        );
      kel = await resolveKey(config.kelKeyFile, 'kel', external, config.name);
    }
    checkOnePurpose(witness, cosign, bastion, kel);
    const next = config.nextKeyFile === undefined ? undefined : await resolveKey(config.nextKeyFile, 'next', external, config.name);
    if (next !== undefined)
      checkNextKey(next, [witness, ...cosign, ...(bastion === undefined ? [] : [bastion]), ...(kel === undefined ? [] : [kel])]);
    return new NodeKeys(witness, cosign, bastion, kel, next);
  }
}

/** SPEC §1: the witness key, the cosign keys and the bastion key are pairwise distinct (public keys compared). */
export function checkOnePurpose(witness: NodeKey, cosign: readonly NodeKey[], bastion: NodeKey | undefined, kel?: NodeKey): void {
  cosign.forEach((k, i) => {
    if (sameKey(k, witness))
      throw new NodeKeyError('cosign_key_reused', 'the cosign key must differ from the witness key (a key signs one signature type)');
    const first = cosign.findIndex((o) => sameKey(o, k));
    if (first < i) throw new NodeKeyError('cosign_key_duplicate', `--cosign-key ${i + 1} holds the same key as --cosign-key ${first + 1}`);
  });
  if (kel !== undefined && [witness, ...cosign].some((k) => sameKey(k, kel)))
    throw new NodeKeyError(
      'kel_key_reused',
      'the KERI witness key (--kel-key) must differ from the witness key and the cosign keys (one key, one purpose)',
    );
  if (bastion === undefined) return;
  for (const [what, k] of [
    ['witness key (--key)', witness] as const,
    ...cosign.map((c) => ['cosign key (--cosign-key)', c] as const),
    ...(kel === undefined ? [] : [['KERI witness key (--kel-key)', kel] as const]),
  ]) {
    if (sameKey(k, bastion))
      throw new NodeKeyError('bastion_key_reused', `--bastion-key must differ from the ${what} (a key serves one purpose only)`);
  }
}

/** SPEC §1: the next witness key differs from every other key of the node (public keys compared). */
export function checkNextKey(next: NodeKey, others: readonly NodeKey[]): void {
  const other = others.find((k) => Buffer.from(k.publicKey).equals(next.publicKey));
  if (other !== undefined)
    throw new NodeKeyError('next_key_reused', `--next-key must differ from the ${FLAG[other.purpose]} key (a key serves one purpose only)`);
}

/**
 * The KERI witness identity (SPEC §3.6.1): a non-transferable basic prefix `B…` from the
 * `--kel-key` Ed25519 key, its one-event KEL (an `icp` whose SAID keeps `i`), and the signatures
 * this node makes as a KERI witness. One key, one purpose (§1): this key signs KERI messages only.
 * The key is in the process or (SPEC §1.1) an ssh-agent/PKCS#11 Signer: signing is async either way,
 * and an external signer's failure rejects with its SignerError (the request answers 503
 * `signer_unavailable` and its transaction commits nothing).
 */
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { isSigner, type Signer } from '../keys/signer.ts';
import { encodeAttachment } from '../keri/attachments.ts';
import { computeSaid, parseEvent, versionString } from '../keri/event.ts';
import { encodeQb64 } from '../keri/qb64.ts';
import { SAID_PLACEHOLDER, blake3Qb64 } from '../keri/said.ts';

export interface KelIdentity {
  /** `B` + base64url(0x00 ‖ key)[1:]. */
  readonly prefix: string;
  readonly publicKey: Uint8Array;
  /** The node's own inception event: B(e) and its `-AAB` attachment. */
  readonly inception: { event: string; said: string; attachment: string };
  /** Ed25519 over `message` with the KERI witness key. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

const utf8 = new TextEncoder();

/** The non-transferable basic prefix of an Ed25519 public key. */
export function basicPrefix(publicKey: Uint8Array): string {
  return encodeQb64('B', publicKey);
}

export async function kelIdentity(key: KeyObject | Signer): Promise<KelIdentity> {
  const sign = isSigner(key) ? (m: Uint8Array) => key.sign(m) : (m: Uint8Array) => Promise.resolve(signEd25519(key, m));
  const publicKey = isSigner(key) ? key.publicKey : ed25519PublicKeyBytes(key);
  const prefix = basicPrefix(publicKey);
  const draft = {
    v: versionString(0),
    t: 'icp',
    d: SAID_PLACEHOLDER,
    i: prefix,
    s: '0',
    kt: '1',
    k: [prefix],
    nt: '0',
    n: [],
    bt: '0',
    b: [],
    c: [],
    a: [],
  };
  draft.v = versionString(utf8.encode(JSON.stringify(draft)).length);
  // SAID(e): B(e) with d as 44 `#` (a basic prefix's `i` is not blanked), then checked by the verifier's own SAID.
  draft.d = blake3Qb64(utf8.encode(JSON.stringify(draft)));
  const event = parseEvent(draft);
  if (computeSaid(event) !== event.d) throw new Error('kel identity: the own inception SAID does not verify');
  const text = new TextDecoder().decode(event.bytes);
  const signature = await sign(event.bytes);
  const attachment = encodeAttachment({ signatures: [{ code: 'A', index: 0, ondex: 0, signature }], sourceSeals: [] });
  return {
    prefix,
    publicKey,
    inception: { event: text, said: event.d, attachment },
    sign,
  };
}

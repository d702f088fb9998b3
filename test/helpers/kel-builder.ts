/**
 * Signed KERI KELs for tests (SPEC §3.5), on top of src/keri/build.ts (which the `npm start` demo
 * uses too). Deterministic keys from labels, so a failing test reproduces:
 *
 *   import { KelBuilder, signer, kelSet, kelFile } from '../helpers/kel-builder.ts';
 *   const root = KelBuilder.incept({ signers: [signer('root/0')], next: [signer('root/1')] });
 *   const agent = KelBuilder.incept({ signers: [signer('agent/0')], next: [signer('agent/1')], delegator: root.prefix });
 *   root.interact([agent.sealOf(0)]);                  // anchors the dip
 *   evaluateKels(kelSet(root, agent), null, new Map()); // both accepted
 *   writeFileSync(join(dir, `${agent.prefix}.kel.json`), kelFile(agent)); // a dir: source file
 *
 * `signer(label, 'p256')` gives a P-256 key. Everything src/keri/build.ts exports is re-exported
 * (finalizeEvent and signEvent make hand-written or tampered events).
 */
import { createECDH, createHash, createPrivateKey } from 'node:crypto';
import { ed25519Signer, p256Signer, type KelBuilder, type KelSigner } from '../../src/keri/build.ts';
import type { RawKel } from '../../src/keri/types.ts';

export * from '../../src/keri/build.ts';

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** A deterministic signer for `label` (the seed is SHA-256 of the label). */
export function signer(label: string, curve: 'ed25519' | 'p256' = 'ed25519'): KelSigner {
  const seed = createHash('sha256').update(`kel-builder/${curve}/${label}`).digest();
  if (curve === 'ed25519') return ed25519Signer(new Uint8Array(seed));
  // A P-256 scalar in [1, n−1] from the seed (reduced; a zero scalar is astronomically unlikely).
  const d = (BigInt('0x' + seed.toString('hex')) % (P256_N - 1n)) + 1n;
  const dHex = d.toString(16).padStart(64, '0');
  const key = createPrivateKey({
    key: { kty: 'EC', crv: 'P-256', d: Buffer.from(dHex, 'hex').toString('base64url'), ...publicCoordinates(dHex) },
    format: 'jwk',
  });
  return p256Signer(key);
}

/** Node needs x and y in a private JWK; derive them with an ECDH object. */
function publicCoordinates(dHex: string): { x: string; y: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(dHex, 'hex'));
  const pub = ecdh.getPublicKey();
  return { x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33, 65).toString('base64url') };
}

/** A snapshot for evaluateKels: prefix → RawKel of each builder. */
export function kelSet(...builders: KelBuilder[]): Map<string, RawKel> {
  return new Map(builders.map((b) => [b.prefix, b.rawKel()]));
}

/** A `dir:` source file's text (`<prefix>.kel.json`), attachments as CESR text or (hex = true) as upstream's hex. */
export function kelFile(builder: KelBuilder, hex = false): string {
  const doc = builder.document();
  return JSON.stringify({
    ...doc,
    attachments: hex ? doc.attachments.map((a) => Buffer.from(a, 'latin1').toString('hex')) : doc.attachments,
  });
}

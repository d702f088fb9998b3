/**
 * Real witness output for the verifier SDK tests (test/verify/*): an in-process witness (anchor
 * role) signs and logs anchors of an Ed25519 party and a P-256 party, then answers a fork with a
 * 409 duplicity proof. Everything is returned as the JSON text the witness sent, with the keys a
 * relying party would pin, so Node and browser tests check the same bytes.
 */
import { partyMessage } from '../../src/anchor/messages.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { generateP256, signP256 } from '../../src/crypto/p256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { encodeFinalizedBundle } from '../../src/verify/finalize.ts';
import { makeWitnessSet, witnessSetSaid } from '../../src/verify/witness-set.ts';
import { parseReceipt } from '../../src/verify/receipt.ts';
import { edParty, fill, signAnchor } from './anchors.ts';
import { post, startTestWitness, WITNESS_NAME, WITNESS_ORIGIN } from './witness.ts';
import { tempDir } from './tmp.ts';

export interface VerifyFixtures {
  witness: { name: string; logOrigin: string; publicKeyHex: string };
  /** Ed25519 party: its key, a 200 body (JSON text), a 409 duplicity proof (JSON text). */
  edParty: { publicKeyHex: string; response: string; duplicity: string };
  /** P-256 party: its compressed key and a 200 body. */
  p256Party: { publicKeyHex: string; response: string };
  /** A finalized bundle (JSON text) of the Ed25519 anchor under the one-member set, and that set's SAID. */
  bundle: string;
  said: string;
  /** The witness's latest checkpoint note. */
  checkpoint: string;
  cleanup: () => Promise<void>;
}

export async function makeVerifyFixtures(): Promise<VerifyFixtures> {
  const tmp = tempDir('aw-verify-');
  const alice = edParty(0x21);
  const bob = generateP256();
  const witnessKey = ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x01)));
  const set = makeWitnessSet(1, [{ name: WITNESS_NAME, publicKey: witnessKey, logOrigin: WITNESS_ORIGIN }]);
  const said = await witnessSetSaid(set);
  const registry = {
    parties: [
      { id: 'did:keri:EAlice', delegator: 'did:keri:ERoot', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] },
      { id: 'did:keri:EBob', delegator: 'did:keri:ERoot', keys: [{ curve: 'p256', public_key: encodeHex(bob.publicKey) }] },
    ],
  };
  const w = await startTestWitness(tmp.dir, registry);
  try {
    const submit = async (a: Anchor, agent: string, scope: string) => {
      const r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent, root: 'did:keri:ERoot', scope } });
      return r;
    };
    const aSeed = deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', 'EScope');
    const fields = { seedId: aSeed, index: 3, cumulative: 30n, timestamp: 1_700_000_003, witnessSet: { said, threshold: 1 } };
    const first = signAnchor(alice, { ...fields, head: fill(0x33) });
    const ok = await submit(first, 'did:keri:EAlice', 'EScope');
    if (ok.status !== 200) throw new Error(`anchor: ${ok.status} ${ok.text}`);
    const fork = await submit(signAnchor(alice, { ...fields, head: fill(0x34) }), 'did:keri:EAlice', 'EScope');
    if (fork.status !== 409) throw new Error(`fork: ${fork.status} ${fork.text}`);

    const unsigned: Anchor = {
      seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EBob', 'EScope'),
      index: 0,
      head: fill(0x44),
      cumulative: 1n,
      timestamp: 1_700_000_100,
      witnessSet: { said, threshold: 1 },
      sigParty: { curve: 'p256', publicKey: bob.publicKey, signature: new Uint8Array(64) },
    };
    const bobAnchor = { ...unsigned, sigParty: { ...unsigned.sigParty, signature: signP256(bob.privateKey, partyMessage(unsigned)) } };
    const okBob = await submit(bobAnchor, 'did:keri:EBob', 'EScope');
    if (okBob.status !== 200) throw new Error(`p256 anchor: ${okBob.status} ${okBob.text}`);
    const cp = await fetch(`${w.url}/log/checkpoint`);
    const bundle = await encodeFinalizedBundle({ anchor: first, witnessSet: set, receipts: [parseReceipt(ok.body)] });
    return {
      witness: { name: WITNESS_NAME, logOrigin: WITNESS_ORIGIN, publicKeyHex: encodeHex(witnessKey) },
      edParty: { publicKeyHex: encodeHex(alice.publicKey), response: ok.text, duplicity: fork.text },
      p256Party: { publicKeyHex: encodeHex(bob.publicKey), response: okBob.text },
      bundle: JSON.stringify(bundle, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)),
      said,
      checkpoint: await cp.text(),
      cleanup: async () => {
        await w.close();
        tmp.cleanup();
      },
    };
  } catch (e) {
    await w.close();
    tmp.cleanup();
    throw e;
  }
}

/** The same JSON text with one byte flipped at `at` (a hex or base64 digit swapped for another of the same alphabet). */
export function flipDigit(text: string, at: number): string {
  const c = text[at]!;
  const swap = c === 'a' ? 'b' : c === '0' ? '1' : c === 'A' ? 'B' : /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : 'a';
  return text.slice(0, at) + swap + text.slice(at + 1);
}

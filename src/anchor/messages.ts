/**
 * The signed bytes of SPEC §3.1, built from decoded values only:
 *  - party message  = JCS {v:"auths-anchor/party/v1", seedId, index, head, cumulative (decimal string), ts, witnessSet}
 *  - cosign message = the same with v:"auths-anchor/cosign/v1" and sigParty {curve, publicKey, signature};
 *    it is also the witness log entry, whose leaf hash is SHA-256(0x00 ‖ cosign message).
 * No node: import (the browser verifier, src/verify, builds the same bytes); seed derivation is seed.ts.
 */
import { canonicalBytes } from '../encoding/jcs.ts';
import { encodeHex } from '../encoding/hex.ts';
import { utf8Bytes } from '../encoding/portable.ts';
import type { Anchor } from './types.ts';

export const PARTY_V = 'auths-anchor/party/v1';
export const COSIGN_V = 'auths-anchor/cosign/v1';
export const DUPLICITY_V = 'auths-anchor/duplicity/v1';

function partyObject(a: Anchor, v: string): Record<string, unknown> {
  return {
    v,
    seedId: encodeHex(a.seedId),
    index: a.index,
    head: encodeHex(a.head),
    cumulative: a.cumulative.toString(10),
    ts: a.timestamp,
    witnessSet: { said: a.witnessSet.said, threshold: a.witnessSet.threshold },
  };
}

/**
 * The JCS bytes of the party (or, with `sigParty`, the cosign) object written directly in
 * canonical key order: byte for byte canonicalBytes(partyObject(…)) / canonicalBytes(cosignObject(…))
 * (test/anchor/messages.test.ts compares them over random and hostile anchors), without building
 * and sorting an object on each of the two messages every submission needs. Values outside the
 * shapes the codec produces take the generic path, which refuses what JCS refuses.
 */
function anchorMessage(a: Anchor, v: string, withSigParty: boolean): Uint8Array | undefined {
  const { index, timestamp, witnessSet } = a;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(timestamp) || !Number.isSafeInteger(witnessSet.threshold)) return undefined;
  if (!witnessSet.said.isWellFormed()) return undefined;
  let text = `{"cumulative":"${a.cumulative.toString(10)}","head":"${encodeHex(a.head)}","index":${index},"seedId":"${encodeHex(a.seedId)}"`;
  if (withSigParty) {
    text += `,"sigParty":{"curve":${JSON.stringify(a.sigParty.curve)},"publicKey":"${encodeHex(a.sigParty.publicKey)}","signature":"${encodeHex(a.sigParty.signature)}"}`;
  }
  // JSON.stringify of a string is RFC 8785's string form for well-formed strings (§3.2.2.2).
  text += `,"ts":${timestamp},"v":"${v}","witnessSet":{"said":${JSON.stringify(witnessSet.said)},"threshold":${witnessSet.threshold}}}`;
  return utf8Bytes(text);
}

export function partyMessage(a: Anchor): Uint8Array {
  return anchorMessage(a, PARTY_V, false) ?? canonicalBytes(partyObject(a, PARTY_V));
}

export function cosignObject(a: Anchor): Record<string, unknown> {
  return {
    ...partyObject(a, COSIGN_V),
    sigParty: { curve: a.sigParty.curve, publicKey: encodeHex(a.sigParty.publicKey), signature: encodeHex(a.sigParty.signature) },
  };
}

export function cosignMessage(a: Anchor): Uint8Array {
  return anchorMessage(a, COSIGN_V, true) ?? canonicalBytes(cosignObject(a));
}

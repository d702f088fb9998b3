/**
 * Reading a peer witness's add-checkpoint answers (C2SP tlog-witness; the wire format is
 * src/note/tlog-witness.ts), pure:
 *
 *  - 200: signature lines. A line counts when its (name, key ID) is one of the witness's vkeys
 *    and it verifies over the checkpoint text (0x04: cosignature/v1; 0x06: ML-DSA-44 subtree/v1
 *    with start 0, end = size, hash = root); lines of other keys are ignored; a matching line
 *    that fails to verify fails the whole reply, and so does a reply with no matching line.
 *  - 409: `<size>\n`, the size the witness last cosigned for the origin.
 */
import { formatSignatureLine, type NoteSignature } from '../note/signed-note.ts';
import { parseConflictReply, parseCosignatureReply } from '../note/tlog-witness.ts';
import type { NoteVerifier } from '../note/vkey.ts';
import { PeerFailure } from './errors.ts';

const ENCODER = new TextEncoder();

/**
 * The cosignature lines of a 200 reply that verify for `checkpointText` under `verifiers`, one per
 * key, in reply order (`— <name> <b64>\n` each). Throws PeerFailure `invalid_peer_response`.
 */
export function verifiedCosignatures(body: string, checkpointText: string, verifiers: readonly NoteVerifier[]): string {
  let sigs: NoteSignature[];
  try {
    sigs = parseCosignatureReply(body);
  } catch (e) {
    throw new PeerFailure('invalid_peer_response', `unparsable cosignature lines: ${(e as Error).message}`, 200);
  }
  const text = ENCODER.encode(checkpointText);
  const seen = new Set<NoteVerifier>();
  let out = '';
  for (const sig of sigs) {
    const v = verifiers.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (v === undefined) continue;
    if (!v.verify(text, sig.signature))
      throw new PeerFailure('invalid_peer_response', `the line of ${v.vkey} does not verify for this checkpoint`, 200);
    if (seen.has(v)) continue;
    seen.add(v);
    out += formatSignatureLine(sig);
  }
  if (out === '') throw new PeerFailure('invalid_peer_response', 'no cosignature line by one of the configured vkeys', 200);
  return out;
}

/** The size of a 409 body (`<size>\n`, canonical decimal), or a PeerFailure. */
export function parseConflictSize(body: string): number {
  const size = parseConflictReply(body);
  if (size === null) throw new PeerFailure('invalid_peer_response', '409 without a size body', 409);
  return size;
}

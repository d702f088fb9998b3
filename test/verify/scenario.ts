/**
 * The checks of the verifier SDK over real witness output (test/helpers/verify-fixtures.ts), written
 * once and run twice: in Node by test/verify/verify.test.ts and in Chromium by
 * test/verify/browser.test.ts (bundled alone: it imports nothing at run time and takes the loaded
 * `anchor-witness/verify` module as a parameter). Each check returns its outcome; the callers assert.
 */
import type * as Verify from '../../src/verify/index.ts';

export interface ScenarioInput {
  witness: { name: string; logOrigin: string; publicKeyHex: string };
  edParty: { publicKeyHex: string; response: string; duplicity: string };
  p256Party: { publicKeyHex: string; response: string };
  bundle: string;
  said: string;
  checkpoint: string;
}

export interface Outcome {
  name: string;
  /** `ok`, or the VerificationError (or UsageError) code, or `threw: <message>` for anything else. */
  got: string;
  want: string;
}

const hexBytes = (h: string): Uint8Array =>
  Uint8Array.from({ length: h.length / 2 }, (_, i) => Number.parseInt(h.slice(2 * i, 2 * i + 2), 16));
const hexOf = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const IDENTITY = `01${'00'.repeat(31)}`;
const FORGED_SIG = `01${'00'.repeat(63)}`;

/** Replace one character of a string field (hex or base64) by another of the same alphabet. */
function flip(s: string, at = Math.floor(s.length / 2)): string {
  const c = s[at]!;
  const to = c === 'a' ? 'b' : c === 'A' ? 'B' : /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : 'a';
  return s.slice(0, at) + to + s.slice(at + 1);
}

export async function runScenario(v: typeof Verify, input: ScenarioInput): Promise<Outcome[]> {
  const out: Outcome[] = [];
  const check = async (name: string, want: string, fn: () => Promise<unknown>): Promise<void> => {
    let got = 'ok';
    try {
      await fn();
    } catch (e) {
      got = e instanceof v.VerificationError || e instanceof v.UsageError ? e.code : `threw: ${String(e)}`;
    }
    out.push({ name, got, want });
  };
  const witness = { name: input.witness.name, logOrigin: input.witness.logOrigin, publicKey: hexBytes(input.witness.publicKeyHex) };
  const alice = { curve: 'ed25519' as const, publicKey: hexBytes(input.edParty.publicKeyHex) };
  const bob = { curve: 'p256' as const, publicKey: hexBytes(input.p256Party.publicKeyHex) };
  type Body = {
    anchor: { head: string; sig_party: { signature: string; public_key: string } };
    cosignature: { signature: string; witness_public_key: string };
    inclusion: { checkpoint: string; hashes: string[]; tlog_proof: string; leaf_index: number };
  };
  const body = (): Body => JSON.parse(input.edParty.response) as Body;

  // Genuine output verifies.
  await check('Ed25519 party anchor response verifies', 'ok', async () => {
    const r = await v.verifyAnchorResponse(body(), witness, alice);
    if (r.treeSize < 1) throw new Error('tree size');
  });
  await check('the response parsed losslessly (parseJson) verifies; a u128 cumulative stays exact', 'ok', async () => {
    await v.verifyAnchorResponse(v.parseJson(input.edParty.response), witness, alice);
    const big = v.parseJson('{"cumulative":340282366920938463463374607431768211455}') as { cumulative: unknown };
    if (big.cumulative !== '340282366920938463463374607431768211455') throw new Error('cumulative rounded');
  });
  await check('duplicate keys in the JSON text', 'malformed_response', () => Promise.resolve(v.parseJson('{"a":1,"a":2}')));
  await check('P-256 party anchor response verifies', 'ok', () =>
    v.verifyAnchorResponse(JSON.parse(input.p256Party.response), witness, [alice, bob]),
  );
  await check('a registry entry with several keys: any current key may sign', 'ok', () =>
    v.verifyAnchorResponse(body(), witness, [bob, alice]),
  );

  // Tampered copies: one flipped byte each.
  const tampered = async (name: string, want: string, edit: (b: Body) => void) => {
    const b = body();
    edit(b);
    await check(name, want, () => v.verifyAnchorResponse(b, witness, alice));
  };
  await tampered(
    'flipped byte in the cosignature',
    'cosignature_invalid',
    (b) => (b.cosignature.signature = flip(b.cosignature.signature)),
  );
  await tampered('flipped byte in the anchor head', 'cosignature_invalid', (b) => (b.anchor.head = flip(b.anchor.head)));
  await tampered(
    'flipped byte in the party signature',
    'cosignature_invalid',
    (b) => (b.anchor.sig_party.signature = flip(b.anchor.sig_party.signature)),
  );
  await tampered('flipped byte in the checkpoint signature', 'checkpoint_invalid', (b) => {
    const cp = b.inclusion.checkpoint;
    const at = cp.lastIndexOf(' ') + 12;
    b.inclusion.checkpoint = flip(cp, at);
  });
  await tampered('flipped byte in the checkpoint root', 'checkpoint_invalid', (b) => {
    const lines = b.inclusion.checkpoint.split('\n');
    lines[2] = flip(lines[2]!, 5);
    b.inclusion.checkpoint = lines.join('\n');
  });
  if (body().inclusion.hashes.length > 0) {
    await tampered(
      'flipped byte in an inclusion proof hash',
      'inclusion_invalid',
      (b) => (b.inclusion.hashes[0] = flip(b.inclusion.hashes[0]!, 5)),
    );
  }
  await tampered(
    'flipped byte in the tlog-proof',
    'tlog_proof_invalid',
    (b) =>
      (b.inclusion.tlog_proof = b.inclusion.tlog_proof.replace(
        `index ${b.inclusion.leaf_index}\n`,
        `index ${b.inclusion.leaf_index + 1}\n`,
      )),
  );

  // Wrong pins.
  await check('another party pinned', 'party_key_mismatch', () => v.verifyAnchorResponse(body(), witness, bob));
  await check('no party pinned', 'party_unpinned', () => v.verifyAnchorResponse(body(), witness, []));
  await check('another witness key pinned', 'wrong_witness', () =>
    v.verifyAnchorResponse(body(), { ...witness, publicKey: hexBytes(input.p256Party.publicKeyHex).subarray(1) }, alice),
  );

  // Small-order keys: the identity-key forgery (key 01 00…00, R = 01 00…00, S = 0) "verifies" any message on lax verifiers.
  await check('small-order witness key with a forged cosignature', 'cosignature_invalid', () => {
    const b = body();
    b.cosignature.witness_public_key = IDENTITY;
    b.cosignature.signature = FORGED_SIG;
    return v.verifyAnchorResponse(b, { ...witness, publicKey: hexBytes(IDENTITY) }, alice);
  });
  await check('Ed25519 identity-key forgery refused', 'ok', async () => {
    if (await v.verifyEd25519(hexBytes(IDENTITY), new TextEncoder().encode('any message'), hexBytes(FORGED_SIG)))
      throw new Error('forgery accepted');
  });

  // Duplicity proof (the witness's 409 body).
  type Proof = {
    anchor_a: { head: string; sig_party: { public_key: string; signature: string } };
    anchor_b: { head: string; sig_party: { public_key: string; signature: string } };
  };
  const proof = (): Proof => JSON.parse(input.edParty.duplicity) as Proof;
  await check('duplicity proof verifies', 'ok', () => v.verifyDuplicityProof(proof()));
  await check('duplicity proof verifies against the pinned party', 'ok', () => v.verifyDuplicityProof(proof(), alice));
  await check('duplicity proof against another party', 'party_key_mismatch', () => v.verifyDuplicityProof(proof(), bob));
  await check('duplicity proof with a flipped byte in anchor_b', 'duplicity_proof_invalid', () => {
    const p = proof();
    p.anchor_b.sig_party.signature = flip(p.anchor_b.sig_party.signature);
    return v.verifyDuplicityProof(p);
  });
  await check('duplicity proof under a small-order key with forged signatures', 'duplicity_proof_invalid', () => {
    const p = proof();
    for (const a of [p.anchor_a, p.anchor_b]) a.sig_party = { ...a.sig_party, public_key: IDENTITY, signature: FORGED_SIG };
    return v.verifyDuplicityProof(p);
  });

  // Notes, checkpoints, tlog-proofs.
  const logKey = await v.ed25519NoteKey(input.witness.logOrigin, witness.publicKey);
  await check('the witness checkpoint verifies', 'ok', () => v.verifyCheckpoint(input.checkpoint, [logKey], input.witness.logOrigin));
  await check('the checkpoint under its vkey', 'ok', async () =>
    v.verifyCheckpoint(input.checkpoint, [await v.noteKeyFromVkey(logKey.vkey)]),
  );
  await check('a checkpoint with a flipped signature byte', 'checkpoint_invalid', () =>
    v.verifyCheckpoint(flip(input.checkpoint, input.checkpoint.lastIndexOf(' ') + 12), [logKey]),
  );
  await check('a checkpoint of another origin', 'checkpoint_wrong_origin', () =>
    v.verifyCheckpoint(input.checkpoint, [logKey], 'other.example/log'),
  );
  await check('the tlog-proof of the response verifies for the anchor entry', 'ok', async () => {
    const b = v.parseAnchorResponse(body());
    await v.verifyTlogProof(
      b.inclusion.tlog_proof,
      { data: v.anchorLogEntry(v.decodeResponseAnchor(b.anchor)) },
      [logKey],
      input.witness.logOrigin,
    );
  });
  await check('the tlog-proof for another entry', 'inclusion_invalid', () =>
    v.verifyTlogProof(body().inclusion.tlog_proof, { data: new Uint8Array(3) }, [logKey]),
  );
  await check('a note signed by no known key', 'note_unverified', async () =>
    v.verifyNote(input.checkpoint, [await v.ed25519NoteKey('other.example', witness.publicKey)]),
  );

  // Finalized bundle against the pinned set.
  await check('the finalized bundle is final under the pinned set', 'ok', async () => {
    const r = await v.verifyFinalizedBundle(JSON.parse(input.bundle), { expectedSaid: input.said, party: alice });
    if (!r.final) throw new v.VerificationError(r.code, r.reason);
  });
  await check('a bundle whose receipt has a flipped cosignature byte', 'threshold_not_met', async () => {
    const doc = JSON.parse(input.bundle) as { receipts: { cosignature: { signature: string } }[] };
    doc.receipts[0]!.cosignature.signature = flip(doc.receipts[0]!.cosignature.signature);
    const r = await v.verifyFinalizedBundle(doc, { expectedSaid: input.said });
    if (!r.final) throw new v.VerificationError(r.code, r.reason);
  });
  await check('a bundle under an unpinned set', 'usage', () => v.verifyFinalizedBundle(JSON.parse(input.bundle)));

  // Freshness (upstream's ladder).
  await check('freshness (9, 7), (5, 7), (5, none)', 'ok', () => {
    const got = JSON.stringify([v.freshness(9, 7), v.freshness(5, 7), v.freshness(5, undefined)]);
    const want = JSON.stringify([
      { status: 'fresh', anchorIndex: 7 },
      { status: 'stale', bundleIndex: 5, anchorIndex: 7 },
      { status: 'unanchored' },
    ]);
    return got === want ? Promise.resolve() : Promise.reject(new Error(got));
  });
  out.push({ name: 'hex round trip (scenario helper)', got: hexOf(hexBytes('00ff')) === '00ff' ? 'ok' : 'bad', want: 'ok' });
  return out;
}

// End to end (issue "Client SDK and CLI", Must show): three real witnesses on loopback, a party
// submits a chain of anchors, finalization at threshold 2; one witness stopped → still final;
// forged responses (wrong key, bit-flipped proof, checkpoint from another log) rejected with the
// right reason; a fork detected and its duplicity proof verified offline; retries on 503/429.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeDuplicityProof } from '../../src/anchor/codec.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import {
  chainTip,
  finalityOf,
  freeze,
  generatePartyKey,
  initPartyState,
  parseJsonBody,
  parseReceipt,
  partyClaim,
  recordSubmission,
  resolveTargets,
  signNextAnchor,
  submitAnchor,
  verifyFinalized,
  witnessSetSaid,
  type PartyKey,
  type PartyState,
  type SubmitEvent,
  type SubmitResult,
  type WitnessTarget,
} from '../../src/client/index.ts';
import { fill } from '../helpers/anchors.ts';
import { setOf, startWitnesses, type TestWitness } from '../helpers/client-witnesses.ts';
import { startProxy } from '../helpers/client-proxy.ts';
import { tempDir } from '../helpers/tmp.ts';

const aliceKey = ed25519KeyFromSeed(fill(0x09));
const alice: PartyKey = { curve: 'ed25519', privateKey: aliceKey, publicKey: ed25519PublicKeyBytes(aliceKey) };
const carol = generatePartyKey('p256');
const registry = {
  parties: [
    { id: 'did:keri:EAlice', delegator: 'did:keri:ERoot', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] },
    { id: 'did:keri:ECarol', keys: [{ curve: 'p256', public_key: encodeHex(carol.publicKey) }] },
  ],
};

let tmp: ReturnType<typeof tempDir>;
let ws: TestWitness[];
let targets: WitnessTarget[];
const http = { timeoutMs: 2000, retries: 1, backoffMs: 50 };
const now = (): number => Math.floor(Date.now() / 1000);

before(async () => {
  tmp = tempDir('aw-client-');
  ws = await startWitnesses(tmp.dir, 3, registry);
  ({ targets } = await resolveTargets(
    setOf(ws, 2),
    ws.map((w) => w.url),
    http,
  ));
});
after(async () => {
  await Promise.all(ws.map((w) => w.stop()));
  tmp.cleanup();
});

function chain(scope: string, key: PartyKey = alice, agent = 'did:keri:EAlice', root: string | null = 'did:keri:ERoot'): PartyState {
  return initPartyState({
    keyFile: 'party.pem',
    key,
    party: { agent, ...(root !== null ? { root } : {}), scope },
    witnessSet: setOf(ws, 2),
  });
}

async function submitNext(
  s: PartyState,
  key: PartyKey,
  head: number,
  to: readonly WitnessTarget[] = targets,
  opts = {},
): Promise<{ results: SubmitResult[]; final: boolean }> {
  const { anchor } = await signNextAnchor(s, key, { head: fill(head), timestamp: now(), addCumulative: 10n });
  const results = await submitAnchor(anchor, partyClaim(s.party), to, { ...http, ...opts });
  const { result, bundle } = await finalityOf(anchor, s.witnessSet, results, [], {});
  recordSubmission(s, bundle.receipts, result);
  return { results, final: result.final };
}

void test('a chain of anchors (Ed25519 and P-256 parties) is final at threshold 2 on three witnesses', async () => {
  const s = chain('EChain');
  for (let i = 1; i <= 4; i++) {
    const { results, final } = await submitNext(s, alice, i);
    assert.deepEqual(
      results.map((r) => r.outcome.kind),
      ['cosigned', 'cosigned', 'cosigned'],
    );
    assert.equal(final, true);
  }
  assert.equal(s.latest?.anchor.index, 3);
  assert.equal(s.latest.final, true);
  assert.equal(s.pending, null);
  assert.equal(s.latest.anchor.cumulative, 40n);
  const r = await verifyFinalized(s.latest.anchor, s.witnessSet, s.latest.receipts);
  assert.equal(r.final, true);
  assert.equal(r.valid, 3);
  assert.equal(r.said, await witnessSetSaid(s.witnessSet));
  assert.equal(s.latest.anchor.witnessSet.said, r.said);
  assert.deepEqual(
    r.members.map((m) => [m.name, m.status]),
    ws.map((w) => [w.name, 'valid']),
  );

  // P-256 party, underived root = agent
  const c = chain('ECarolScope', carol, 'did:keri:ECarol', null);
  for (let i = 1; i <= 2; i++) {
    const r = await submitNext(c, carol, 0x20 + i);
    assert.equal(r.final, true, JSON.stringify(r.results.map((x) => x.outcome)));
  }
  assert.equal(c.latest?.anchor.sigParty.curve, 'p256');

  // Resubmitting the latest is a replay everywhere: same cosignatures.
  const latest = chainTip(s)!;
  const again = await submitAnchor(latest, partyClaim(s.party), targets, http);
  for (const x of again) {
    assert.equal(x.outcome.kind, 'cosigned');
    assert.equal(x.outcome.replay, true);
  }
});

void test('one witness stopped → still final at threshold 2; two missing → threshold_not_met with typed member results', async () => {
  const s = chain('EStopped');
  assert.equal((await submitNext(s, alice, 1)).final, true);
  await ws[2]!.stop();
  try {
    const events: SubmitEvent[] = [];
    const { results, final } = await submitNext(s, alice, 2, targets, {
      timeoutMs: 500,
      retries: 1,
      onEvent: (e: SubmitEvent) => events.push(e),
    });
    assert.deepEqual(
      results.map((r) => r.outcome.kind),
      ['cosigned', 'cosigned', 'unavailable'],
    );
    assert.ok(
      events.some((e) => e.type === 'retry' && e.witness === ws[2]!.name),
      'a retry was reported for the stopped witness',
    );
    assert.equal(final, true);
    const r = await verifyFinalized(s.latest!.anchor, s.witnessSet, s.latest!.receipts);
    assert.equal(r.final, true);
    assert.equal(r.valid, 2);
    assert.deepEqual(r.members[2], { name: ws[2]!.name, status: 'missing' });

    const one = await verifyFinalized(s.latest!.anchor, s.witnessSet, s.latest!.receipts.slice(0, 1));
    assert.equal(one.final, false);
    assert.equal(one.code, 'threshold_not_met');
    assert.match(one.reason, /1 of 2 required/);
  } finally {
    await ws[2]!.start();
  }
  // The restarted witness catches up with a submission of the latest anchor (a receipt is added).
  const target = s.latest!;
  const results = await submitAnchor(target.anchor, partyClaim(s.party), targets, http);
  assert.equal(results[2]!.outcome.kind, 'cosigned');
  const { result } = await finalityOf(target.anchor, s.witnessSet, results, target.receipts);
  assert.equal(result.valid, 3);
});

void test('forged responses are rejected with the right reason: wrong key, bit-flipped proof, checkpoint from another log', async () => {
  const s = chain('EForged');
  await submitNext(s, alice, 1);
  await submitNext(s, alice, 2); // trees of size ≥ 2 so audit paths are non-empty
  const other = ed25519KeyFromSeed(fill(0x77));
  const otherPub = encodeHex(ed25519PublicKeyBytes(other));
  const w2 = await submitAnchor(s.latest!.anchor, partyClaim(s.party), [targets[1]!], http);
  assert.equal(w2[0]!.outcome.kind, 'cosigned');
  const w2Inclusion = w2[0]!.outcome.receipt.inclusion;

  type Body = Record<string, Record<string, unknown>>;
  const flipB64 = (b64: string): string => {
    const bytes = Buffer.from(b64, 'base64');
    bytes[0]! ^= 0x01;
    return bytes.toString('base64');
  };
  const cases: [string, (b: Body) => Body, string][] = [
    [
      'another key signs and is named',
      (b) => ({ ...b, cosignature: { ...b.cosignature, witness_public_key: otherPub, signature: '00'.repeat(64) } }),
      'wrong_witness',
    ],
    [
      'another key signs under the pinned key',
      (b) => {
        const anchor = s.pending?.anchor ?? s.latest!.anchor;
        return { ...b, cosignature: { ...b.cosignature, signature: encodeHex(signEd25519(other, cosignMessage(anchor))) } };
      },
      'cosignature_invalid',
    ],
    [
      'bit-flipped audit path',
      (b) => ({ ...b, inclusion: { ...b.inclusion, hashes: (b.inclusion!.hashes as string[]).map((h, i) => (i === 0 ? flipB64(h) : h)) } }),
      'inclusion_invalid',
    ],
    [
      'bit-flipped tlog-proof only',
      (b) => ({
        ...b,
        inclusion: {
          ...b.inclusion,
          tlog_proof: (b.inclusion!.tlog_proof as string).replace(/\nindex (\d+)\n/, (_m, n: string) => `\nindex ${Number(n) ^ 1}\n`),
        },
      }),
      'tlog_proof_invalid',
    ],
    [
      'checkpoint from another log',
      (b) => ({ ...b, inclusion: { ...b.inclusion, checkpoint: w2Inclusion.checkpoint, tlog_proof: w2Inclusion.tlog_proof } }),
      'checkpoint_wrong_origin',
    ],
    ['another log entirely', (b) => ({ ...b, inclusion: { ...w2Inclusion } }), 'checkpoint_wrong_origin'],
    [
      'checkpoint signature flipped',
      (b) => {
        const cp = b.inclusion!.checkpoint as string;
        const sigAt = cp.lastIndexOf(' ') + 1;
        const forged = cp.slice(0, sigAt) + flipB64(cp.slice(sigAt).trim()) + '\n';
        return {
          ...b,
          inclusion: { ...b.inclusion, checkpoint: forged, tlog_proof: (b.inclusion!.tlog_proof as string).replace(cp, forged) },
        };
      },
      'checkpoint_invalid',
    ],
    ['co-signed another anchor', (b) => ({ ...b, anchor: { ...b.anchor, head: '02'.repeat(32) } }), 'cosignature_invalid'],
  ];
  const proxy = await startProxy(() => ws[0]!.url);
  try {
    for (const [what, tamper, code] of cases) {
      proxy.behaviour = { tamper: tamper as (b: Record<string, unknown>) => Record<string, unknown> };
      const { anchor } = await signNextAnchor(s, alice, { head: fill(0x30 + cases.findIndex((c) => c[0] === what)), timestamp: now() });
      const [r] = await submitAnchor(anchor, partyClaim(s.party), [{ url: proxy.url, member: targets[0]!.member }], http);
      assert.equal(r!.outcome.kind, 'invalid_response', what);
      assert.equal(r!.outcome.code, code, `${what}: ${r!.outcome.reason}`);
    }
    // The witness did co-sign the last one; the honest receipts make it final, the forged one is named.
    proxy.behaviour = { tamper: cases[2]![1] as (b: Record<string, unknown>) => Record<string, unknown> };
    const { anchor } = await signNextAnchor(s, alice, { head: fill(0x50), timestamp: now() });
    const results = await submitAnchor(
      anchor,
      partyClaim(s.party),
      [{ url: proxy.url, member: targets[0]!.member }, targets[1]!, targets[2]!],
      http,
    );
    const forged = parseReceipt(parseJsonBody(await (await fetch(`${ws[0]!.url}/v1/anchor/${encodeHex(anchor.seedId)}`)).text()));
    forged.inclusion.hashes[0] = flipB64(forged.inclusion.hashes[0]!);
    const { result } = await finalityOf(anchor, s.witnessSet, results, [forged]);
    assert.equal(result.final, true);
    assert.deepEqual(result.members[0], {
      name: ws[0]!.name,
      status: 'invalid',
      code: 'inclusion_invalid',
      reason: 'the inclusion proof does not lead to the checkpoint root (computed root does not match)',
    });
    const strict = await verifyFinalized(
      anchor,
      s.witnessSet,
      [forged, ...results.flatMap((r) => (r.outcome.kind === 'cosigned' ? [r.outcome.receipt] : []))],
      { strict: true },
    );
    assert.equal(strict.final, false);
    assert.equal(strict.code, 'receipt_invalid');
  } finally {
    await proxy.close();
  }
  // A set the anchor does not commit to: witness_set_mismatch.
  const smaller = setOf(ws.slice(0, 2), 2);
  assert.equal((await verifyFinalized(s.latest!.anchor, smaller, s.latest!.receipts)).code, 'witness_set_mismatch');
  assert.equal(
    (await verifyFinalized(s.latest!.anchor, s.witnessSet, s.latest!.receipts, { expectedSaid: await witnessSetSaid(smaller) })).code,
    'said_mismatch',
  );
});

void test('a fork is detected: 409 with a duplicity proof that verifies offline; the seed freezes', async () => {
  const s = chain('EFork');
  assert.equal((await submitNext(s, alice, 1)).final, true);
  const tip = s.latest!.anchor;
  // The party signs two heads at the next index and shows them to different witnesses.
  const { anchor: a } = await signNextAnchor(s, alice, { head: fill(0xa1), timestamp: now() });
  const first = await submitAnchor(a, partyClaim(s.party), [targets[0]!], http);
  assert.equal(first[0]!.outcome.kind, 'cosigned');
  s.pending = null; // forget it, as a careless (or malicious) party would
  s.latest = { anchor: tip, receipts: [], final: true };
  const { anchor: b } = await signNextAnchor(s, alice, { head: fill(0xb2), timestamp: now() });
  assert.equal(a.index, b.index);
  const results = await submitAnchor(b, partyClaim(s.party), targets, http);
  assert.deepEqual(
    results.map((r) => r.outcome.kind),
    ['duplicity', 'cosigned', 'cosigned'],
  );
  const dup = results[0]!.outcome;
  assert.ok(dup.kind === 'duplicity');
  await freeze(s, dup.wire);
  await assert.rejects(signNextAnchor(s, alice, { head: fill(3), timestamp: now() }), { code: 'state_conflict' });

  // Offline: the proof alone, serialized and read back, verifies; both heads are in it.
  const text = stringifyJson(dup.wire);
  const proof = decodeDuplicityProof(parseJsonBody(text));
  assert.deepEqual(verifyDuplicityProof(proof), { valid: true });
  assert.deepEqual([encodeHex(proof.anchorA.head), encodeHex(proof.anchorB.head)], [encodeHex(fill(0xa1)), encodeHex(fill(0xb2))]);
  // The witness serves the same proof, and any later submission gets it again.
  const stored = await fetch(`${ws[0]!.url}/v1/duplicity/${encodeHex(a.seedId)}`);
  assert.equal(stored.status, 200);
  assert.deepEqual(parseJsonBody(await stored.text()), parseJsonBody(text));
  // A tampered proof does not verify.
  const tampered = decodeDuplicityProof(parseJsonBody(text.replace(encodeHex(fill(0xb2)), encodeHex(fill(0xb3)))));
  assert.equal(verifyDuplicityProof(tampered).valid, false);
});

void test('503 and 429 are retried honouring Retry-After; a witness that never answers times out', async () => {
  const s = chain('ERetry');
  const proxy = await startProxy(() => ws[0]!.url, { refuse: { count: 1, status: 503, retryAfter: '1' } });
  try {
    const events: SubmitEvent[] = [];
    const { anchor } = await signNextAnchor(s, alice, { head: fill(1), timestamp: now() });
    const started = Date.now();
    const [r] = await submitAnchor(anchor, partyClaim(s.party), [{ url: proxy.url, member: targets[0]!.member }], {
      ...http,
      onEvent: (e) => events.push(e),
    });
    assert.equal(r!.outcome.kind, 'cosigned');
    assert.equal(r!.attempts, 2);
    assert.ok(Date.now() - started >= 950, 'waited for Retry-After');
    assert.deepEqual(events[0], { type: 'retry', witness: ws[0]!.name, attempt: 1, delayMs: 1000, reason: 'HTTP 503' });

    proxy.posts = 0;
    proxy.behaviour = { refuse: { count: 5, status: 429, retryAfter: '0' } };
    const { anchor: next } = await signNextAnchor(s, alice, { head: fill(2), timestamp: now() });
    const [limited] = await submitAnchor(next, partyClaim(s.party), [{ url: proxy.url, member: targets[0]!.member }], {
      ...http,
      retries: 2,
    });
    assert.equal(limited!.attempts, 3);
    assert.deepEqual(limited!.outcome, { kind: 'rejected', status: 429, code: 'rate_limited', detail: 'try later' });

    proxy.behaviour = { refuse: { count: 99, status: 503, retryAfter: '3600' } };
    const [tooLong] = await submitAnchor(next, partyClaim(s.party), [{ url: proxy.url, member: targets[0]!.member }], http);
    assert.equal(tooLong!.attempts, 1, 'a Retry-After beyond the limit is not waited for');

    proxy.behaviour = { hang: true };
    const t0 = Date.now();
    const [hung] = await submitAnchor(next, partyClaim(s.party), [{ url: proxy.url, member: targets[0]!.member }], {
      timeoutMs: 200,
      retries: 1,
      backoffMs: 10,
    });
    assert.equal(hung!.outcome.kind, 'unavailable');
    assert.match(hung!.outcome.reason, /no response within 200 ms/);
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    await proxy.close();
  }
});

// The 200 body of POST /v1/anchor is written directly as text by cosignedBodyJson (issue 28)
// instead of by the server's replacer-based serializer. No wire change: the bytes must be the
// serializer's (stringifyJson) for any body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { cosignedBody, cosignedBodyJson } from '../../src/anchoring/reply.ts';
import { anchorJson, encodeAnchor } from '../../src/anchor/codec.ts';
import { encodeStoredAnchor } from '../../src/store/rows.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { parseStrictJson, stringifyJson } from '../../src/encoding/json.ts';
import type { SeedRecord } from '../../src/store/types.ts';
import { edParty, signAnchor } from '../helpers/anchors.ts';
import { startTestWitness } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { encodeHex } from '../../src/encoding/hex.ts';

/** Text that JSON must escape: quotes, backslashes, control characters, non-ASCII, lone surrogates. */
function nastyText(): string {
  const pool = ['a', 'Z', '/', '"', '\\', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '☃', '😀', '\ud800', '\udfff', ' ', '\u2028'];
  let s = '';
  for (let i = randomInt(0, 24); i > 0; i--) s += pool[randomInt(pool.length)]!;
  return s;
}

function randomCumulative(): bigint {
  switch (randomInt(5)) {
    case 0:
      return 0n;
    case 1:
      return BigInt(Number.MAX_SAFE_INTEGER) + BigInt(randomInt(3)) - 1n; // around 2^53
    case 2:
      return BigInt('0x' + randomBytes(32).toString('hex')); // up to 2^256
    case 3:
      return BigInt('0x' + randomBytes(64).toString('hex')); // longer still
    default:
      return BigInt(randomInt(1, 1_000_000));
  }
}

function randomRecord(): SeedRecord {
  const anchor: Anchor = {
    seedId: randomBytes(32),
    index: randomInt(1, 2 ** 47),
    head: randomBytes(32),
    cumulative: randomCumulative(),
    timestamp: randomInt(0, 253402300800),
    witnessSet: { said: nastyText(), threshold: randomInt(1, 100) },
    sigParty: { curve: randomInt(2) === 0 ? 'ed25519' : 'p256', publicKey: randomBytes(32), signature: randomBytes(64) },
  };
  return {
    seedId: anchor.seedId,
    owner: nastyText(),
    createdAt: 0,
    latest: anchor,
    cosignature: { signature: randomBytes(64), timestamp: randomInt(0, 253402300800), leafIndex: randomInt(0, 2 ** 40) },
  };
}

function randomInclusion() {
  return {
    log_origin: nastyText(),
    leaf_index: randomInt(0, 2 ** 40),
    tree_size: randomInt(1, 2 ** 40),
    hashes: Array.from({ length: randomInt(0, 40) }, () => randomBytes(32).toString('base64')),
    checkpoint: `${nastyText()}\n${randomInt(1, 1e9)}\n${randomBytes(32).toString('base64')}\n\n— ${nastyText()}\n`,
    tlog_proof: nastyText(),
  };
}

void test('cosignedBodyJson (the 200 body written directly, with what a batch shares kept from the previous reply) writes the bytes of stringifyJson(cosignedBody(…))', () => {
  // Runs of replies that share a witness, a checkpoint note, an origin and a cosignature time (as a
  // batch's do), then change one of them, also to an equal value in another string or object: the
  // kept text must follow the value every time.
  let witness = { name: nastyText(), publicKeyHex: randomBytes(32).toString('hex') };
  let shared = randomInclusion();
  let time = randomInt(0, 253402300800);
  for (let i = 0; i < 3000; i++) {
    switch (randomInt(8)) {
      case 0:
        witness = { name: nastyText(), publicKeyHex: randomBytes(32).toString('hex') };
        break;
      case 1:
        witness = { name: witness.name.split('').join(''), publicKeyHex: witness.publicKeyHex }; // equal, another object
        break;
      case 2:
        shared = randomInclusion();
        break;
      case 3:
        shared = { ...shared, checkpoint: shared.checkpoint.split('\n').join('\n') };
        break;
      case 4:
        time = randomInt(0, 253402300800);
        break;
      case 5:
        witness.name = nastyText(); // the same object, changed
        break;
    }
    const next = randomInt(3) === 0 ? { publicKeyHex: randomBytes(32).toString('hex'), signature: randomBytes(64) } : undefined;
    const record = randomRecord();
    record.cosignature.timestamp = time;
    const own = randomInclusion();
    const inclusion = { ...own, log_origin: shared.log_origin, tree_size: shared.tree_size, checkpoint: shared.checkpoint };
    const replay = randomInt(2) === 0;
    const body = cosignedBody(witness, record, inclusion, replay, next);
    const text = cosignedBodyJson(witness, record, inclusion, replay, next);
    assert.equal(text, stringifyJson(body));
  }
});

void test("anchorJson (the stored anchor row and the 200 body's anchor, written directly) writes the bytes of stringifyJson(encodeAnchor(a))", () => {
  for (let i = 0; i < 3000; i++) {
    const a = randomRecord().latest;
    const text = anchorJson(a);
    assert.equal(text, stringifyJson(encodeAnchor(a)));
    assert.equal(encodeStoredAnchor(a), text);
  }
});

void test('POST /v1/anchor over loopback: the 200 body is byte for byte what the server serializer writes, for a cumulative beyond 2^53 (2^127 + 12345)', async () => {
  const party = edParty(0x31);
  const tmp = tempDir();
  const w = await startTestWitness(tmp.dir, {
    parties: [{ id: 'EJsonAgent', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }],
  });
  try {
    const seedId = deriveSeedId('did:keri:EJsonAgent', 'did:keri:EJsonAgent', 'json');
    for (const cumulative of [7n, 2n ** 127n + 12345n]) {
      const anchor = signAnchor(party, {
        seedId,
        index: cumulative === 7n ? 1 : 2,
        head: randomBytes(32),
        cumulative,
        timestamp: Math.floor(Date.now() / 1000),
      });
      const res = await fetch(new URL('/v1/anchor', w.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stringifyJson({
          anchor: encodeAnchor(anchor),
          party: { agent: 'did:keri:EJsonAgent', root: 'did:keri:EJsonAgent', scope: 'json' },
        }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json; charset=utf-8$/);
      const parsed = parseStrictJson(text, { bigIntegerKeys: new Set(['cumulative']) }) as { anchor: { cumulative: unknown } };
      assert.equal(BigInt(parsed.anchor.cumulative as string), cumulative);
      parsed.anchor.cumulative = cumulative;
      assert.equal(text, stringifyJson(parsed));
      assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    }
  } finally {
    await w.close();
    tmp.cleanup();
  }
});

// The witness policy (src/verify/policy.ts) and its client-side form (src/verify/quorum.ts): one
// definition of "a witness counts once" (SPEC §4.1 rev 4) for the node's publishing quorum, the
// SDKs, `verify cosignature --quorum` and the monitor; thresholds over witnesses and nested groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44, mlDsa44Supported } from '../../src/crypto/ml-dsa.ts';
import { logWitnessQuorum } from '../../src/log-witness/config.ts';
import { ed25519Cosigner, mlDsa44Cosigner } from '../../src/note/cosigner.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote, verifyNote } from '../../src/note/signed-note.ts';
import { Policy, group, witness, type PolicyWitness } from '../../src/verify/policy.ts';
import { cosignerQuorum, countedCosigners } from '../../src/verify/quorum.ts';

const fill = (b: number): Uint8Array => new Uint8Array(32).fill(b);
const w = (id: string): PolicyWitness<string> => witness(id, [`${id}-key`]);
const votes =
  (...ids: string[]) =>
  (x: PolicyWitness<string>): boolean =>
    ids.includes(x.id);

void test('a threshold counts witnesses: a witness whose two keys both signed is one vote', () => {
  const a = witness('a', ['a-ed25519', 'a-mldsa']);
  const b = w('b');
  const policy = Policy.threshold(2, [a, b]);
  // a's two lines verify: still one witness of the two required
  const keysThatSigned = new Set(['a-ed25519', 'a-mldsa']);
  const tally = policy.tally((x) => x.keys.some((k) => keysThatSigned.has(k)));
  assert.equal(tally.met, false);
  assert.deepEqual(
    tally.counted.map((x) => x.id),
    ['a'],
  );
  assert.deepEqual(
    tally.missing.map((x) => x.id),
    ['b'],
  );
  assert.equal(policy.tally(votes('a', 'b')).met, true);
});

void test('groups nest: all of {2 of X1..X3, any of Y1..Y2}', () => {
  const [x1, x2, x3, y1, y2] = ['x1', 'x2', 'x3', 'y1', 'y2'].map(w) as [
    PolicyWitness<string>,
    PolicyWitness<string>,
    PolicyWitness<string>,
    PolicyWitness<string>,
    PolicyWitness<string>,
  ];
  const policy = new Policy(group('x-and-y', 2, [group('x', 2, [x1, x2, x3]), group('y', 1, [y1, y2])]));
  assert.equal(policy.witnesses.length, 5);
  assert.equal(policy.tally(votes('x1', 'x2', 'y2')).met, true);
  assert.equal(policy.tally(votes('x1', 'y1', 'y2')).met, false, 'one X is not two');
  assert.equal(policy.tally(votes('x1', 'x2', 'x3')).met, false, 'no Y');
  assert.equal(policy.tally(votes()).met, false);
});

void test('a witness listed in two groups is asked once and counted once', () => {
  const shared = w('s');
  const policy = new Policy(group('root', 2, [group('g1', 1, [shared, w('a')]), group('g2', 1, [shared, w('b')])]));
  let asked = 0;
  const tally = policy.tally((x) => {
    if (x.id === 's') asked++;
    return x.id === 's';
  });
  assert.equal(asked, 1);
  assert.equal(tally.met, true, 'one vote in each group it belongs to');
  assert.deepEqual(
    tally.counted.map((x) => x.id),
    ['s'],
  );
  assert.deepEqual(
    policy.witnesses.map((x) => x.id),
    ['s', 'a', 'b'],
  );
});

void test('a policy that could count a witness twice, or never be met, is refused (usage)', () => {
  const a = w('a');
  assert.throws(() => Policy.threshold(0, [a]), { code: 'usage' });
  assert.throws(() => Policy.threshold(2, [a]), { code: 'usage' });
  assert.throws(() => Policy.threshold(1.5, [a, w('b')]), { code: 'usage' });
  assert.throws(() => Policy.threshold(1, []), { code: 'usage' });
  assert.throws(() => Policy.threshold(2, [a, a]), { code: 'usage', message: /twice/ });
  assert.throws(() => new Policy(group('root', 1, [group('g', 3, [a, w('b')])])), { code: 'usage', message: /group g/ });
});

void test('client side: a cosigner name is a witness; its Ed25519 and ML-DSA-44 lines count once', { skip: !mlDsa44Supported() }, () => {
  const text = formatCheckpoint({ origin: 'example.com/log', size: 3, rootHash: fill(7), extensions: [] });
  const w1ed = ed25519Cosigner('w1.example', ed25519KeyFromSeed(fill(1)));
  const w1pq = mlDsa44Cosigner('w1.example', generateMlDsa44().privateKey);
  const w2 = ed25519Cosigner('w2.example', ed25519KeyFromSeed(fill(2)));
  const note = signNote(text, [w1ed.noteSigner(5), w1pq.noteSigner(6)]);
  const keys = [w1ed.verifier(), w1pq.verifier(), w2.verifier()];
  const verified = verifyNote(note, keys);
  assert.equal(verified.verified.length, 2, 'two lines verify');
  const policy = cosignerQuorum(keys, 2);
  assert.equal(policy.witnesses.length, 2);
  assert.throws(() => countedCosigners(verified, policy), { code: 'cosignature_missing', message: /1 of 2/ });
  assert.deepEqual(countedCosigners(verified, cosignerQuorum(keys, 1)), [{ name: 'w1.example', timestamp: 5n }]);
  // the default quorum is every witness (names), not every key
  assert.equal(cosignerQuorum(keys, undefined).threshold, 2);
  // one key under two names would be two votes: refused
  const alias = ed25519Cosigner('alias.example', ed25519KeyFromSeed(fill(1))).verifier();
  assert.throws(() => cosignerQuorum([...keys, alias], 1), { code: 'usage', message: /two names/ });
});

void test('the node: each --log-witnesses entry is one witness of the publishing Policy', () => {
  const k = (b: number) => ed25519Cosigner(`w${b}.example`, ed25519KeyFromSeed(fill(b))).verifier();
  const policy = logWitnessQuorum({
    quorum: 2,
    witnesses: [
      { url: 'https://a.example/', verifiers: [k(1), k(2)] },
      { url: 'https://b.example/', verifiers: [k(3)] },
    ],
  });
  assert.ok(policy instanceof Policy);
  assert.equal(policy.threshold, 2);
  assert.equal(policy.tally((x) => x.id === 'https://a.example/').met, false, "both of a's keys are one vote");
  assert.equal(policy.tally(() => true).met, true);
});

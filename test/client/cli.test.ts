// The client subcommands over real child processes against in-process witnesses: the party flow
// (keygen, witness-set, init, anchor next, submit, status, bundle), `verify …` exit codes (0 valid,
// 1 invalid with a one-line reason, 2 unusable input), `monitor --once`, and an example block in
// every command's --help.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { anchorWitnessProgram } from '../../src/cli/anchor-witness.ts';
import {
  encodeFinalizedBundle,
  encodeWitnessSet,
  makeWitnessSet,
  parseJsonBody,
  signAnchor,
  submitAnchor,
  witnessSetSaid,
} from '../../src/client/index.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import {
  anchorResponse,
  checkpointNote,
  duplicityProof,
  fakeParty,
  fakeWitness,
  garbageSignature,
  mintAnchor,
  receiptFor,
} from '../helpers/malicious-witness.ts';
import { fill } from '../helpers/anchors.ts';
import { startWitnesses, type TestWitness } from '../helpers/client-witnesses.ts';
import { tempDir } from '../helpers/tmp.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const clientOnly = join(import.meta.dirname, '..', 'helpers', 'client-cli.ts');
interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
/** Run the client subcommands in a child process (`full`: through bin/anchor-witness.js). */
function run(args: string[], env: Record<string, string> = {}, full = false): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [full ? bin : clientOnly, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}
const ok = (r: Run, what: string): Run => {
  assert.equal(r.code, 0, `${what}: ${r.stderr}`);
  return r;
};

const partyKey = ed25519KeyFromSeed(fill(0x0c));
const registry = {
  parties: [
    {
      id: 'did:keri:ECli',
      delegator: 'did:keri:ERoot',
      keys: [{ curve: 'ed25519', public_key: encodeHex(ed25519PublicKeyBytes(partyKey)) }],
    },
  ],
};

let tmp: ReturnType<typeof tempDir>;
let ws: TestWitness[];
const f = (name: string): string => join(tmp.dir, name);
before(async () => {
  tmp = tempDir('aw-cli-');
  ws = await startWitnesses(tmp.dir, 3, registry, { allowUnderivedSeeds: true });
  writeNewKeyFile(f('party.pem'), ed25519PrivateKeyToPem(partyKey));
});
after(async () => {
  await Promise.all(ws.map((w) => w.stop()));
  tmp.cleanup();
});

let seed = '';

void test('party: keygen, witness-set, init, anchor next, submit (final), status, bundle', async () => {
  const [ed, p256, set] = await Promise.all([
    run(['party', 'keygen', '--out', f('k-ed.pem')], {}, true),
    run(['party', 'keygen', '--curve', 'p256', '--out', f('k-p256.pem')]),
    run(['party', 'witness-set', '--witness', ws.map((w) => w.url).join(','), '--threshold', '2', '--out', f('set.json')]),
  ]);
  assert.match(ok(ed, 'keygen').stdout, /^[0-9a-f]{64}\n$/);
  assert.match(ok(p256, 'keygen p256').stdout, /^0[23][0-9a-f]{64}\n$/);
  assert.match(p256.stderr, /registry key entry: \{"curve": "p256"/);
  assert.equal(statSync(f('k-p256.pem')).mode & 0o777, 0o600);
  assert.match(ok(set, 'witness-set').stdout, /^I[A-Za-z0-9_-]{43}\n$/);
  assert.match(set.stderr, /confirm it with the operator/);

  const init = ok(
    await run([
      'party',
      'init',
      '--state',
      f('chain.json'),
      '--key',
      f('party.pem'),
      '--agent',
      'did:keri:ECli',
      '--root',
      'did:keri:ERoot',
      '--scope',
      'EScope',
      '--witness-set',
      f('set.json'),
    ]),
    'init',
  );
  seed = init.stdout.trim();
  assert.match(seed, /^[0-9a-f]{64}$/);
  const again = await run([
    'party',
    'init',
    '--state',
    f('chain.json'),
    '--key',
    f('party.pem'),
    '--agent',
    'did:keri:ECli',
    '--scope',
    'EScope',
    '--witness-set',
    f('set.json'),
  ]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /refusing to overwrite/);

  const next = ok(
    await run([
      'party',
      'anchor',
      'next',
      '--state',
      f('chain.json'),
      '--head',
      '01'.repeat(32),
      '--cumulative',
      '340282366920938463463374607431768211455',
    ]),
    'anchor next',
  );
  assert.match(next.stdout, /"cumulative": 340282366920938463463374607431768211455/);
  assert.match(next.stderr, /signed anchor index 0 \(pending/);

  const submit = ok(
    await run([
      'party',
      'submit',
      '--state',
      f('chain.json'),
      '--witness',
      ws[0]!.url,
      '--witness',
      ws[1]!.url,
      '--witness',
      ws[2]!.url,
      '--out',
      f('final.json'),
    ]),
    'submit',
  );
  assert.match(submit.stdout, /^FINAL anchor index 0: final: 3 of 3 witnesses \(threshold 2\)\n$/);
  for (const w of ws) assert.match(submit.stderr, new RegExp(`${w.name.replace('.', '\\.')}: co-signed, leaf \\d+ of \\d+, verified`));

  // The next anchor: head of a file, cumulative unchanged (the maximum), witnesses from the environment; JSON output.
  writeFileSync(f('event.json'), '{"kel":"event"}');
  ok(await run(['party', 'anchor', 'next', '--state', f('chain.json'), '--head-file', f('event.json')]), 'anchor next 2');
  const json = ok(
    await run(['party', 'submit', '--state', f('chain.json'), '--json'], { AW_WITNESS: ws.map((w) => w.url).join(',') }),
    'submit --json',
  );
  const out = JSON.parse(json.stdout) as {
    index: number;
    final: boolean;
    finality: { valid: number; members: { status: string }[] };
    results: { outcome: { kind: string } }[];
  };
  assert.equal(out.index, 1);
  assert.equal(out.final, true);
  assert.deepEqual(
    out.results.map((r) => r.outcome.kind),
    ['cosigned', 'cosigned', 'cosigned'],
  );

  const [status, statusJson, bundle] = await Promise.all([
    run(['party', 'status', '--state', f('chain.json')]),
    run(['party', 'status', '--state', f('chain.json'), '--json']),
    run(['party', 'bundle', '--state', f('chain.json'), '--out', f('final-1.json')]),
  ]);
  assert.match(ok(status, 'status').stdout, new RegExp(`seed +${seed}`));
  assert.match(status.stdout, /latest +index 1 head [0-9a-f]{64} cumulative 340282366920938463463374607431768211455 — FINAL \(3\/2\)/);
  const sj = JSON.parse(ok(statusJson, 'status --json').stdout) as { latest: { index: number; final: boolean }; pending: unknown };
  assert.deepEqual([sj.latest.index, sj.latest.final, sj.pending], [1, true, null]);
  ok(bundle, 'bundle');
  assert.equal((JSON.parse(readFileSync(f('final-1.json'), 'utf8')) as { anchor: { index: number } }).anchor.index, 1);
  assert.equal((JSON.parse(readFileSync(f('final.json'), 'utf8')) as { anchor: { index: number } }).anchor.index, 0);
});

void test('verify: exit 0 when valid, 1 with a one-line reason when not, 2 for unusable input', async () => {
  assert.notEqual(seed, '', 'runs after the party flow');
  const [w1, w2] = [ws[0]!, ws[1]!];
  const response = await (await fetch(`${w1.url}/v1/anchor/${seed}`)).text();
  writeFileSync(f('resp.json'), response);
  const body = parseJsonBody(response) as {
    anchor: Record<string, unknown>;
    cosignature: Record<string, string>;
    inclusion: { hashes: string[]; tlog_proof: string; checkpoint: string };
  };
  const flip = (b64: string): string => {
    const b = Buffer.from(b64, 'base64');
    b[0]! ^= 1;
    return b.toString('base64');
  };
  writeFileSync(
    f('resp-flipped.json'),
    stringifyJson({ ...body, inclusion: { ...body.inclusion, hashes: body.inclusion.hashes.map((h, i) => (i === 0 ? flip(h) : h)) } }),
  );
  writeFileSync(
    f('resp-badsig.json'),
    stringifyJson({ ...body, cosignature: { ...body.cosignature, signature: '00' + body.cosignature.signature!.slice(2) } }),
  );
  writeFileSync(f('proof.txt'), body.inclusion.tlog_proof);
  writeFileSync(f('anchor.json'), stringifyJson(body.anchor));
  writeFileSync(f('other-anchor.json'), stringifyJson({ ...body.anchor, head: 'ff'.repeat(32) }));

  // A fork for the duplicity proof (underived seed): two heads at one index, shown to one witness.
  const fork = new Uint8Array(32).fill(0x5a);
  const a = (head: number) =>
    signAnchor(partyKey, 'ed25519', {
      seedId: fork,
      index: 1,
      head: fill(head),
      cumulative: 1n,
      timestamp: 1_700_000_000,
      witnessSet: { said: 'X', threshold: 1 },
    });
  const target = [{ url: w2.url, member: { name: w2.name, curve: 'ed25519' as const, publicKey: w2.publicKey, logOrigin: w2.origin } }];
  await submitAnchor(a(1), { agent: 'did:keri:ECli' }, target);
  const [dup] = await submitAnchor(a(2), { agent: 'did:keri:ECli' }, target);
  assert.equal(dup!.outcome.kind, 'duplicity');
  const proofText = stringifyJson(dup!.outcome.wire);
  writeFileSync(f('dup.json'), proofText);
  writeFileSync(f('dup-bad.json'), proofText.replace(encodeHex(fill(2)), encodeHex(fill(3))));
  writeFileSync(f('cp-new.txt'), await (await fetch(`${w1.url}/log/checkpoint`)).text());
  const finalDoc = parseJsonBody(readFileSync(f('final.json'), 'utf8')) as {
    receipts: { cosignature: { signature: string; witness_name: string }; inclusion: { checkpoint: string } }[];
  };
  writeFileSync(f('cp-old.txt'), finalDoc.receipts.find((r) => r.cosignature.witness_name === w1.name)!.inclusion.checkpoint); // size 1
  for (const r of finalDoc.receipts)
    r.cosignature.signature = (r.cosignature.signature.startsWith('0') ? '1' : '0') + r.cosignature.signature.slice(1);
  writeFileSync(f('final-bad.json'), stringifyJson(finalDoc));
  writeFileSync(f('anchor-req.json'), stringifyJson({ anchor: encodeAnchor(a(1)) }));

  const k1 = encodeHex(w1.publicKey);
  const k2 = encodeHex(w2.publicKey);
  const pk = encodeHex(ed25519PublicKeyBytes(partyKey));
  const cases: [string[], number, RegExp][] = [
    [
      ['verify', 'inclusion', f('resp.json'), '--witness-key', k1, '--party-key', pk],
      0,
      new RegExp(
        `^OK anchor seed [0-9a-f]{64} index 1 signed by party key ${pk}, co-signed by w1\\.test and included at leaf \\d+ of w1\\.test/anchors size \\d+\n$`,
      ),
    ],
    [['verify', 'inclusion', f('resp.json'), '--witness-set', f('set.json'), '--party-key', `ed25519:${pk}`], 0, /^OK /],
    [['verify', 'inclusion', f('resp.json'), '--witness-key', k1, '--party-key', k2], 1, /^INVALID party_key_mismatch: /],
    [['verify', 'inclusion', f('resp.json'), '--witness-key', k1], 2, /pin the party: give --party-key HEX/],
    [['verify', 'inclusion', f('resp.json'), '--witness-key', k1, '--party-key', 'abcd'], 2, /--party-key must be a party public key/],
    [
      ['verify', 'inclusion', f('resp.json'), '--witness-key', k2, '--party-key', pk],
      1,
      /^INVALID wrong_witness: the response names another witness key than the pinned one\n$/,
    ],
    [
      ['verify', 'inclusion', f('resp.json'), '--witness-key', k1, '--party-key', pk, '--origin', 'w2.test/anchors'],
      1,
      /^INVALID checkpoint_wrong_origin: /,
    ],
    [
      ['verify', 'inclusion', f('resp-flipped.json'), '--witness-key', k1, '--party-key', pk],
      1,
      /^INVALID inclusion_invalid: the inclusion proof does not lead to the checkpoint root( \(.*\))?\n$/,
    ],
    [['verify', 'cosignature', f('resp.json'), '--witness-set', f('set.json')], 0, /^OK cosignature by w1\.test/],
    [['verify', 'cosignature', f('resp-badsig.json'), '--witness-key', k1], 1, /^INVALID cosignature_invalid: /],
    [['verify', 'tlog-proof', f('resp.json'), '--witness-set', f('set.json')], 0, /^OK entry at index \d+ of w1\.test\/anchors/],
    [['verify', 'tlog-proof', f('proof.txt'), '--anchor', f('anchor.json'), '--witness-key', k1, '--origin', w1.origin], 0, /^OK entry/],
    [['verify', 'tlog-proof', f('proof.txt'), '--anchor', f('other-anchor.json'), '--witness-key', k1], 1, /^INVALID inclusion_invalid: /],
    [
      ['verify', 'tlog-proof', f('proof.txt'), '--anchor', f('anchor.json'), '--witness-key', k2],
      1,
      /^INVALID tlog_proof_invalid: .*no signature by a known key/,
    ],
    [
      ['verify', 'duplicity', f('dup.json'), '--full'],
      0,
      /^OK DUPLICITY PROVEN: seed 5a5a.* index 1: heads 0101.* and 0202.* both signed by ed25519 key/,
    ],
    [['verify', 'duplicity', f('dup-bad.json')], 1, /^INVALID duplicity_proof_invalid: anchor_b party signature does not verify\n$/],
    [['verify', 'duplicity', f('anchor-req.json')], 1, /^INVALID duplicity_proof_invalid: not a duplicity proof/],
    [
      ['verify', 'finalized', f('final.json'), '--trust-bundle'],
      0,
      /^OK anchor seed [0-9a-f]{64} index 0 is final: 3 of 3 witnesses \(threshold 2\) — under the bundle's own witness set \(--trust-bundle\)\n$/,
    ],
    [
      ['verify', 'finalized', f('final.json')],
      2,
      /^UNPINNED: the bundle is final only under the witness set it brings itself \(I[A-Za-z0-9_-]{43}\); pin the set with --witness-set FILE or --said SAID/,
    ],
    [
      ['verify', 'finalized', f('final.json'), '--witness-set', f('set.json'), '--party-key', pk],
      0,
      /^OK anchor seed [0-9a-f]{64} index 0 is final: 3 of 3 witnesses \(threshold 2\)\n$/,
    ],
    [['verify', 'finalized', f('final.json'), '--witness-set', f('set.json'), '--party-key', k2], 1, /^INVALID party_key_mismatch: /],
    [['verify', 'finalized', f('final.json'), '--witness-set', f('set.json'), '--strict'], 0, /^OK /],
    [['verify', 'finalized', f('final.json'), '--said', 'IAnotherSet'], 1, /^INVALID said_mismatch: /],
    [
      ['verify', 'finalized', f('final-bad.json')],
      1,
      /^INVALID threshold_not_met: 0 of 2 required valid cosignatures \(w1\.test: cosignature_invalid; w2\.test: cosignature_invalid; w3\.test: cosignature_invalid\)\n$/,
    ],
    [['verify', 'checkpoint', f('cp-new.txt'), '--witness-key', k1], 0, /^OK checkpoint w1\.test\/anchors size \d+ root /],
    [['verify', 'checkpoint', f('cp-new.txt'), '--witness-key', k2], 1, /^INVALID checkpoint_invalid: /],
    [['verify', 'checkpoint', f('cp-new.txt'), '--witness-set', f('set.json')], 0, /^OK checkpoint w1\.test\/anchors/],
    [
      ['verify', 'consistency', f('cp-old.txt'), f('cp-new.txt'), '--tiles', w1.url, '--witness-key', k1],
      0,
      /^OK size \d+ extends size \d+/,
    ],
    [
      ['verify', 'consistency', f('cp-new.txt'), f('cp-old.txt'), '--tiles', w1.url, '--witness-key', k1],
      1,
      /^INVALID consistency_invalid: rollback/,
    ],
    [['verify', 'duplicity', f('missing.json')], 2, /^anchor-witness: usage: cannot read .*missing\.json: ENOENT\n$/],
    [['verify', 'inclusion', f('resp.json')], 2, /give --witness-key HEX/],
  ];
  const results = await Promise.all(
    cases.map(([args]) =>
      args.includes('--full')
        ? run(
            args.filter((a) => a !== '--full'),
            {},
            true,
          )
        : run(args),
    ),
  );
  results.forEach((r, i) => {
    const [args, code, re] = cases[i]!;
    const what =
      args.slice(0, 2).join(' ') +
      ' ' +
      args
        .slice(2)
        .map((x) => x.replace(tmp.dir, ''))
        .join(' ');
    assert.equal(r.code, code, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    assert.match(code === 0 ? r.stdout : r.stderr, re, what);
    if (code !== 0) assert.equal(r.stderr.split('\n').length, 2, `${what}: one line`);
  });
});

void test('a malicious witness (issue 16 item 8): verify inclusion needs the party, verify finalized needs a pinned set, a 0 → 0 forged root is refused', async () => {
  const evil = fakeWitness({ seed: 0x66, name: 'evil.example' });
  const alice = fakeParty(0x0c); // the CLI party's key
  const mallory = fakeParty(0x0a);
  const ek = encodeHex(evil.publicKey);
  const pk = encodeHex(alice.publicKey);
  // 8.1: the witness co-signs and logs, under its own (pinned) key, anchors the party never signed.
  writeFileSync(f('evil-genuine.json'), stringifyJson(anchorResponse(evil, mintAnchor(alice, { index: 1 }))));
  writeFileSync(
    f('evil-garbage.json'),
    stringifyJson(anchorResponse(evil, mintAnchor(alice, { index: 2 }, { signature: garbageSignature() }))),
  );
  writeFileSync(f('evil-minted.json'), stringifyJson(anchorResponse(evil, mintAnchor(mallory, { index: 3 }))));
  // 8.7: a bundle whose witness set (and every receipt) the bundle's maker chose.
  const ws = [fakeWitness({ seed: 0x61, name: 'm1.example' }), fakeWitness({ seed: 0x62, name: 'm2.example' })];
  const set = makeWitnessSet(
    2,
    ws.map((w) => w.member),
  );
  const minted = mintAnchor(mallory, { witnessSet: { said: await witnessSetSaid(set), threshold: 2 } });
  writeFileSync(
    f('evil-bundle.json'),
    stringifyJson(await encodeFinalizedBundle({ anchor: minted, witnessSet: set, receipts: ws.map((w) => receiptFor(w, minted)) })),
  );
  writeFileSync(f('evil-set.json'), stringifyJson(await encodeWitnessSet(set)));
  // 8.7: two size-0 checkpoints, the newer one with a non-empty root; 0 → 0 needs no tiles.
  const empty = fakeWitness({ seed: 0x67, name: 'empty.example' });
  writeFileSync(f('cp0.txt'), checkpointNote(empty, 0));
  writeFileSync(
    f('cp0-forged.txt'),
    signNote(formatCheckpoint({ origin: empty.origin, size: 0, rootHash: fill(7), extensions: [] }), [
      ed25519NoteSigner(empty.origin, empty.key),
    ]),
  );
  const cases: [string[], number, RegExp][] = [
    [
      ['verify', 'inclusion', f('evil-genuine.json'), '--witness-key', ek, '--party-key', pk],
      0,
      /^OK anchor seed 5e5e.* index 1 signed by party key /,
    ],
    [['verify', 'inclusion', f('evil-garbage.json'), '--witness-key', ek, '--party-key', pk], 1, /^INVALID party_signature_invalid: /],
    [
      ['verify', 'inclusion', f('evil-minted.json'), '--witness-key', ek, '--party-key', pk],
      1,
      new RegExp(
        `^INVALID party_key_mismatch: the anchor is signed by ed25519 key ${encodeHex(mallory.publicKey)}, not by the pinned party key\n$`,
      ),
    ],
    [['verify', 'finalized', f('evil-bundle.json')], 2, /^UNPINNED: /],
    [['verify', 'finalized', f('evil-bundle.json'), '--json'], 2, /^UNPINNED: /],
    [['verify', 'finalized', f('evil-bundle.json'), '--trust-bundle'], 0, /^OK .* under the bundle's own witness set/],
    [['verify', 'finalized', f('evil-bundle.json'), '--witness-set', f('set.json')], 1, /^INVALID said_mismatch: /],
    [
      ['verify', 'finalized', f('evil-bundle.json'), '--witness-set', f('evil-set.json'), '--party-key', pk],
      1,
      /^INVALID party_key_mismatch: /,
    ],
    [
      ['verify', 'consistency', f('cp0.txt'), f('cp0.txt'), '--tiles', tmp.dir, '--witness-key', encodeHex(empty.publicKey)],
      0,
      /^OK size 0 extends size 0/,
    ],
    [
      ['verify', 'consistency', f('cp0.txt'), f('cp0-forged.txt'), '--tiles', tmp.dir, '--witness-key', encodeHex(empty.publicKey)],
      1,
      /^INVALID checkpoint_invalid: a checkpoint of size 0 must carry the empty tree's root\n$/,
    ],
  ];
  const results = await Promise.all(cases.map(([args]) => run(args)));
  results.forEach((r, i) => {
    const [args, code, re] = cases[i]!;
    const what = args.map((x) => x.replace(tmp.dir, '')).join(' ');
    assert.equal(r.code, code, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    assert.match(code === 0 ? r.stdout : r.stderr, re, what);
  });
  const json = JSON.parse(results[4]!.stdout) as { final: boolean; code: string; pinned: boolean };
  assert.deepEqual([json.final, json.code, json.pinned], [false, 'unpinned', false]);
});

void test('party submit: a 409 whose duplicity proof is signed by another key is that witness misbehaving; the chain is not frozen (issue 16 item 8.3)', async () => {
  const mallory = fakeParty(0x0a);
  const seedHex = '5e'.repeat(32);
  let proof: unknown = duplicityProof(mallory, { seedId: fill(0x5e), index: 0 }).wire;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(stringifyJson(proof));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const evil = fakeWitness({ seed: 0x66, name: 'evil.example' });
    writeFileSync(f('dup-set.json'), stringifyJson(await encodeWitnessSet(makeWitnessSet(1, [{ ...evil.member, url }]))));
    const state = f('dup-chain.json');
    ok(
      await run([
        'party',
        'init',
        '--state',
        state,
        '--key',
        f('party.pem'),
        '--agent',
        'did:keri:ECli',
        '--seed',
        seedHex,
        '--witness-set',
        f('dup-set.json'),
      ]),
      'init',
    );
    ok(await run(['party', 'anchor', 'next', '--state', state, '--head', '01'.repeat(32)]), 'anchor next');
    const submit = await run(['party', 'submit', '--state', state, '--retries', '0']);
    assert.equal(submit.code, 1, submit.stderr);
    assert.match(
      submit.stderr,
      /evil\.example: INVALID RESPONSE duplicity_proof_foreign: the duplicity proof is signed by ed25519 key [0-9a-f]{64}, not by the party's key/,
    );
    assert.match(submit.stdout, /^NOT FINAL anchor index 0: 0 of 1 required valid cosignatures \(evil\.example: missing\)\n$/);
    const status = ok(await run(['party', 'status', '--state', state, '--json']), 'status');
    assert.equal((JSON.parse(status.stdout) as { frozen: unknown }).frozen, null);
    ok(await run(['party', 'anchor', 'next', '--state', state, '--head', '02'.repeat(32)]), 'the chain goes on');

    // The party's own fork (its key, its seed): that is duplicity, and it freezes the chain.
    proof = duplicityProof(
      { curve: 'ed25519', key: partyKey, publicKey: ed25519PublicKeyBytes(partyKey) },
      { seedId: fill(0x5e), index: 1 },
    ).wire;
    const frozen = await run(['party', 'submit', '--state', state, '--retries', '0']);
    assert.equal(frozen.code, 1);
    assert.match(frozen.stderr, /evil\.example: DUPLICITY/);
    const after = await run(['party', 'anchor', 'next', '--state', state, '--head', '03'.repeat(32)]);
    assert.equal(after.code, 2);
    assert.match(after.stderr, /the seed is frozen/);
  } finally {
    await new Promise<void>((r) => {
      server.close(() => {
        r();
      });
    });
  }
});

void test('monitor --once: exit 0 when all is well, 1 with the finding when a witness withholds; state persists', async () => {
  assert.notEqual(seed, '', 'runs after the party flow');
  const args = [
    'monitor',
    '--once',
    '--json',
    '--witness-set',
    f('set.json'),
    '--registry',
    join(ws[0]!.dir, 'registry.json'),
    '--witness',
    ws.map((w) => w.url).join(','),
    '--seed',
    seed,
    '--state',
    f('monitor.json'),
  ];
  const clean = ok(await run(args), 'monitor');
  const report = JSON.parse(clean.stdout) as { findings: unknown[]; witnesses: { name: string; anchors: Record<string, number> }[] };
  assert.deepEqual(report.findings, []);
  assert.deepEqual(
    report.witnesses.map((w) => w.anchors[seed]),
    [1, 1, 1],
  );
  // One witness is down: the party's next anchor reaches two witnesses only, still final at threshold 2.
  ok(await run(['party', 'anchor', 'next', '--state', f('chain.json'), '--head', '03'.repeat(32)]), 'anchor next');
  const urls = ws.map((w) => w.url).join(',');
  await ws[2]!.stop();
  let down: Run;
  try {
    down = await run(['party', 'submit', '--state', f('chain.json'), '--witness', urls, '--retries', '0']);
  } finally {
    await ws[2]!.start();
  }
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stdout, /^FINAL anchor index 2: final: 2 of 3 witnesses \(threshold 2\)\n$/);
  assert.match(down.stderr, /w3\.test: unavailable: .*ECONNREFUSED/);
  const [found, human] = await Promise.all([run(args), run(args.filter((a) => a !== '--json'))]);
  assert.equal(found.code, 1, found.stderr);
  const findings = (JSON.parse(found.stdout) as { findings: { kind: string; witness: string }[] }).findings;
  assert.deepEqual(
    findings.map((x) => [x.kind, x.witness]),
    [['withholding', 'w3.test']],
  );
  assert.equal(human.code, 1);
  assert.match(human.stdout, /ALERT withholding: w3\.test is behind on seed [0-9a-f]{16}…: index 1 while w1\.test co-signed index 2/);
  const state = JSON.parse(readFileSync(f('monitor.json'), 'utf8')) as { v: string; witnesses: Record<string, { checkpoint: string }> };
  assert.equal(state.v, 'anchor-witness/monitor-state/v1');
  assert.match(state.witnesses['w1.test']!.checkpoint, /^w1\.test\/anchors\n\d+\n/);
});

void test('--help of every client command has examples', () => {
  const program = anchorWitnessProgram();
  const leaves: Command[] = [];
  const walk = (c: Command): void => {
    if (c.commands.length === 0) leaves.push(c);
    c.commands.forEach(walk);
  };
  for (const name of ['party', 'verify', 'monitor']) walk(program.commands.find((c) => c.name() === name)!);
  const ours = new Set([
    'keygen',
    'witness-set',
    'init',
    'next',
    'submit',
    'status',
    'bundle',
    'cosignature',
    'inclusion',
    'duplicity',
    'tlog-proof',
    'finalized',
    'checkpoint',
    'consistency',
    'monitor',
  ]);
  leaves.splice(0, leaves.length, ...leaves.filter((c) => ours.has(c.name())));
  assert.equal(leaves.length, ours.size);
  for (const c of leaves) {
    let out = '';
    c.configureOutput({ writeOut: (s) => (out += s) });
    c.outputHelp();
    assert.match(out, /\nExamples:\n {2}\$ .*anchor-witness /, c.name());
  }
});

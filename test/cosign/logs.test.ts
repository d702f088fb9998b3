// Known logs (SPEC §5): the logs file, logs/v0 list import (new origins only), reloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { KnownLogsSource, loadLogsFile, mergeKnownLogs, parseLogList, parseLogsConfig, resolveLogList } from '../../src/cosign/logs.ts';
import type { KnownLog } from '../../src/cosign/logs.ts';
import { LogsConfigError } from '../../src/cosign/errors.ts';
import { tempDir } from '../helpers/tmp.ts';

const vkeyA = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'; // Appendix C log vkey
const geomys = 'geomys.org/witness/test-log+c0787ff4+AeMb5VOzy60PTGdGmLPxOKGAa0jNyDGsgv2rnprGju1t';
const freshVkey = (name: string, type = SIG_TYPE_ED25519): string => formatVkey(name, type as 1, generateEd25519().publicKey);

function configError(doc: unknown, pattern: RegExp, own?: string): void {
  assert.throws(
    () => parseLogsConfig(doc, own),
    (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_logs_config' && pattern.test(e.message),
  );
}

void test('logs file: valid documents', () => {
  const rotated = freshVkey('example.com/log');
  const logs = parseLogsConfig({
    logs: [
      { origin: 'example.com/log', keys: [vkeyA, rotated], qpd: 86400 },
      { origin: 'geomys.org/witness/test-log', keys: [geomys] },
      // A vkey's name need not equal the origin (logs/v0 allows `origin` ≠ key name).
      { origin: 'other origin with spaces', keys: [freshVkey('signer.example')] },
    ],
  });
  assert.equal(logs.length, 3);
  assert.deepEqual(
    logs[0]!.verifiers.map((v) => v.vkey),
    [vkeyA, rotated],
  );
  assert.equal(logs[0]!.qpd, 86400);
  assert.equal(logs[1]!.qpd, undefined);
  assert.equal(logs[0]!.source, 'logs file');
  assert.deepEqual(parseLogsConfig({ logs: [] }), []);
});

void test('logs file: everything else is refused', () => {
  const ok = { origin: 'example.com/log', keys: [vkeyA] };
  configError([], /must be an object/);
  configError({ logs: [], extra: 1 }, /unknown member "extra"/);
  configError({ logs: {} }, /"logs" must be an array/);
  configError({ logs: [{ ...ok, bastion: 'x' }] }, /\/logs\/0: unknown member "bastion"/);
  configError({ logs: [{ keys: [vkeyA] }] }, /\/logs\/0\/origin/);
  configError({ logs: [{ ...ok, origin: '' }] }, /\/logs\/0\/origin/);
  configError({ logs: [{ ...ok, origin: 'a\nb' }] }, /\/logs\/0\/origin/);
  configError({ logs: [ok, ok] }, /\/logs\/1\/origin: "example.com\/log" is listed twice/);
  configError({ logs: [ok] }, /own log origin/, 'example.com/log');
  configError({ logs: [{ ...ok, keys: [] }] }, /\/logs\/0\/keys: must be a non-empty array/);
  configError({ logs: [{ ...ok, keys: vkeyA }] }, /\/logs\/0\/keys/);
  configError({ logs: [{ ...ok, keys: [vkeyA, vkeyA] }] }, /\/logs\/0\/keys\/1: duplicate key/);
  configError(
    { logs: [{ ...ok, keys: [freshVkey('w.example', SIG_TYPE_COSIGNATURE_V1)] }] },
    /is not a log key: type 0x01 \(Ed25519\) or 0x06/,
  );
  configError({ logs: [{ ...ok, keys: [vkeyA.replace('01882cac', '01882cad')] }] }, /\/logs\/0\/keys\/0: .*key ID/);
  configError(
    { logs: [{ ...ok, keys: ['example.com/log+01882cac+BiVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'] }] },
    /ML-DSA-44 vkey key must be 1312 bytes/,
  );
  configError(
    { logs: [{ ...ok, keys: ['example.com/log+01882cac+BSVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'] }] },
    /unsupported signature type 0x05/,
  );
  configError({ logs: [{ ...ok, keys: [42] }] }, /\/logs\/0\/keys\/0: must be a vkey string/);
  for (const qpd of [0, -1, 1.5, '10', null, 2e9]) configError({ logs: [{ ...ok, qpd }] }, /\/logs\/0\/qpd/);
});

void test('logs file: JSON (strict) and YAML by extension', () => {
  const { dir, cleanup } = tempDir();
  try {
    const yaml = join(dir, 'logs.yaml');
    writeFileSync(yaml, `logs:\n  - origin: example.com/log\n    keys:\n      - ${vkeyA}\n    qpd: 24\n`);
    const [l] = loadLogsFile(yaml);
    assert.equal(l!.origin, 'example.com/log');
    assert.equal(l!.qpd, 24);
    const json = join(dir, 'logs.json');
    writeFileSync(json, `{"logs":[{"origin":"a.example","keys":["${vkeyA}"],"origin":"b.example"}]}`);
    assert.throws(
      () => loadLogsFile(json),
      (e: unknown) => e instanceof LogsConfigError && /logs\.json/.test(e.message),
    );
  } finally {
    cleanup();
  }
});

// transparency-dev/witness-network docs/log-list-format.md example shape, and
// FiloSottile/torchwood cmd/litewitness/testdata/loglist.txt (log_list.0/1/2, list-logs.jsonl).
const sigsumF48 = 'sigsum.org/v1/tree/f48d4a1d0c6370ec189dc537f648ef3bb347b012fbd3c899a630a4cd2e9b8702';
const vkeyF48 = `${sigsumF48}+9bc54c7f+AVv6q3xDaHxI2aTemqEb7W6ZcbO7QbTqTr20thOqfqsw`;
const vkey2EF =
  'sigsum.org/v1/tree/2ef59132082631d13e353b5ae49b22bc51a9bd59f41a2d570960a9658c1ed151+e2137795+ATp+37IPHc3SbPGzFMyZmPTOUlClk6PYPH+Ce5JiCb/h';
const sigsumFAE = 'sigsum.org/v1/tree/fae7fd8f084f9e7a1482162da8a3e52b08e6c1bac74ab831d00eb5c983b84120';
const vkeyFAE = `${sigsumFAE}+7f693d84+AUlxeri80AO7/4j/+OGo+5M2Sud0ktFg34uZl2fZnjJT`;
const vkey80F =
  'sigsum.org/v1/tree/80f121ea8f6364ca8c19212d7caf4e235d00aa34a98d86b60204c24f981a4933+a05ec139+ASZ0biMUCMjOMmt0NyD8g6Mt6RGZGXJU/ZpM5Oy0otex';

const LIST_0 = `#
# List:      10qps-100klogs
# Revision:  123
#
logs/v0

vkey ${vkeyF48}
qpd 86400
contact https://tlog.foo.org/contact
unknown
foo bar

vkey ${vkey2EF}
origin example.com/foo
qpd 24
contact sysadmin (at) bar.org
`;
const LIST_1 = `logs/v0

# new log
vkey ${vkeyFAE}

# existing log, same key
vkey ${vkey2EF}
origin example.com/foo
`;
const LIST_2 = `${LIST_1}
# known log, different key
vkey ${vkey80F}
origin ${sigsumF48}
`;

void test('logs/v0 parsing: comments, origin none, unknown keywords ignored, bastion', () => {
  const entries = parseLogList(LIST_0);
  assert.equal(entries.length, 2);
  assert.deepEqual(entries[0], {
    line: 7,
    vkey: vkeyF48,
    origin: undefined,
    qpd: 86400,
    bastion: undefined,
    contact: 'https://tlog.foo.org/contact',
  });
  assert.equal(entries[1]!.origin, 'example.com/foo');
  const withNone = parseLogList(
    `logs/v0\nvkey ${vkeyA}\norigin none\nqpd 86400\nbastion none\ncontact x\nvkey ${geomys}\nbastion https://bastion.example/\n`,
  );
  assert.equal(withNone[0]!.origin, undefined);
  assert.equal(withNone[1]!.bastion, 'https://bastion.example/');
  assert.deepEqual(parseLogList('  logs/v0  \n'), []);
  const [r0, r1] = resolveLogList(entries);
  assert.ok(r0?.ok === true && r0.origin === sigsumF48);
  assert.ok(r1?.ok === true && r1.origin === 'example.com/foo');
});

void test('logs/v0 parsing: malformed lists are refused whole; unusable entries are skipped', () => {
  const bad = (text: string, pattern: RegExp): void => {
    assert.throws(
      () => parseLogList(text),
      (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_log_list' && pattern.test(e.message),
    );
  };
  bad('', /missing the header/);
  bad(`vkey ${vkeyA}\n`, /expected the header/);
  bad('logs/v1\n', /expected the header/);
  bad('logs/v0\nqpd 5\n', /before the first "vkey"/);
  bad(`logs/v0\nvkey ${vkeyA}\nqpd 5\nqpd 6\n`, /given twice/);
  bad(`logs/v0\nvkey ${vkeyA}\nqpd 0\n`, /qpd must be/);
  bad(`logs/v0\nvkey ${vkeyA}\nqpd 05\n`, /qpd must be/);
  bad(`logs/v0\nvkey ${vkeyA}\norigin\n`, /needs a value/);
  bad('logs/v0\nvkey\n', /expected "vkey <vkey>"/);
  // A type 0x06 vkey whose key is not 1312 bytes, or a broken vkey: that entry is skipped, the rest imported.
  const r = resolveLogList(parseLogList(`logs/v0\nvkey example.com/pq+01020304+BgAA\nvkey ${vkeyA}.\nvkey ${geomys}\n`));
  assert.deepEqual(
    r.map((e) => e.ok),
    [false, false, true],
  );
});

function config(origin: string, vkey: string, qpd?: number): KnownLog {
  return parseLogsConfig({ logs: [{ origin, keys: [vkey], ...(qpd === undefined ? {} : { qpd }) }] })[0]!;
}

void test('merge: litewitness pull-logs sequence — lists add origins, never change or remove them', () => {
  const imported = new Map<string, KnownLog>();
  const step = (...lists: string[]) =>
    mergeKnownLogs(
      [],
      lists.map((t, i) => ({ source: `list${i}`, entries: resolveLogList(parseLogList(t)) })),
      imported,
    );
  let m = step(LIST_0);
  assert.deepEqual([...m.logs.keys()].sort(), ['example.com/foo', sigsumF48]);
  assert.equal(m.logs.get('example.com/foo')!.qpd, 24);
  m = step(LIST_1);
  assert.deepEqual([...m.logs.keys()].sort(), ['example.com/foo', sigsumF48, sigsumFAE]);
  assert.deepEqual(m.notices, []);
  m = step(LIST_2);
  // list-logs.jsonl: the known log keeps its key; the change is reported.
  assert.deepEqual(
    m.logs.get(sigsumF48)!.verifiers.map((v) => v.vkey),
    [vkeyF48],
  );
  assert.equal(m.notices.length, 1);
  assert.match(m.notices[0]!.message, /different keys/);
  // A list that no longer names a log does not remove it; a new qpd is followed (keys are not).
  m = step('logs/v0\n');
  assert.equal(m.logs.size, 3);
  m = step(`logs/v0\nvkey ${vkey80F}\norigin ${sigsumF48}\nqpd 48\n`);
  assert.equal(m.logs.get(sigsumF48)!.qpd, 48);
  assert.deepEqual(
    m.logs.get(sigsumF48)!.verifiers.map((v) => v.vkey),
    [vkeyF48],
  );
});

void test('merge: the logs file wins, own origin skipped, repeated origins merge keys and take the smallest qpd', () => {
  const imported = new Map<string, KnownLog>();
  const k2 = freshVkey('example.com/log');
  const list = `logs/v0\nvkey ${vkeyA}\nqpd 100\nvkey ${k2}\nqpd 50\nvkey ${geomys}\nvkey ${freshVkey('own.example/anchors')}\n`;
  const m = mergeKnownLogs(
    [config('geomys.org/witness/test-log', freshVkey('geomys.org/witness/test-log'), 7)],
    [{ source: 'l', entries: resolveLogList(parseLogList(list)) }],
    imported,
    'own.example/anchors',
  );
  assert.equal(m.logs.size, 2);
  const a = m.logs.get('example.com/log')!;
  assert.deepEqual(
    a.verifiers.map((v) => v.vkey),
    [vkeyA, k2],
  );
  assert.equal(a.qpd, 50);
  assert.equal(a.source, 'list l');
  assert.equal(m.logs.get('geomys.org/witness/test-log')!.qpd, 7);
  assert.equal(m.logs.get('geomys.org/witness/test-log')!.source, 'logs file');
  assert.ok(m.notices.some((n) => /own log origin/.test(n.message)));
  assert.ok(!imported.has('geomys.org/witness/test-log'));
});

void test('KnownLogsSource: start-up refuses bad files; a bad reload keeps the previous copy; rename into place reloads', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'logs.json');
    const list = join(dir, 'list');
    writeFileSync(file, JSON.stringify({ logs: [{ origin: 'example.com/log', keys: [vkeyA] }] }));
    writeFileSync(list, `logs/v0\nvkey ${geomys}\n`);
    assert.throws(() => new KnownLogsSource({ logsFile: join(dir, 'missing.json') }), LogsConfigError);
    writeFileSync(join(dir, 'own.json'), JSON.stringify({ logs: [{ origin: 'own.example/anchors', keys: [vkeyA] }] }));
    assert.throws(() => new KnownLogsSource({ logsFile: join(dir, 'own.json'), ownOrigin: 'own.example/anchors' }), /own log origin/);

    const failures: string[] = [];
    const src = new KnownLogsSource({ logsFile: file, logsLists: [list], events: { failed: (r) => failures.push(r) } });
    assert.deepEqual([...src.current().keys()].sort(), ['example.com/log', 'geomys.org/witness/test-log']);
    writeFileSync(file, '{"logs": [');
    assert.equal(src.reload(), false);
    assert.equal(failures.length, 1);
    assert.equal(src.current().size, 2);
    // A new file renamed into place is picked up by the directory watch (debounced).
    src.start(20);
    const tmp = join(dir, 'logs.json.tmp');
    writeFileSync(
      tmp,
      JSON.stringify({
        logs: [
          { origin: 'example.com/log', keys: [vkeyA] },
          { origin: 'b.example/log', keys: [freshVkey('b.example/log')] },
        ],
      }),
    );
    renameSync(tmp, file);
    const deadline = Date.now() + 3000;
    while (!src.current().has('b.example/log') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    src.stop();
    assert.ok(src.current().has('b.example/log'));
    assert.equal(src.current().size, 3);
  } finally {
    cleanup();
  }
});

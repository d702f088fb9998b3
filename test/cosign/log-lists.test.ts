// Log lists from files (SPEC §5.5, §5.7 "Lists"): the logs/v0 parser, the import plan, and the
// importer on a real store through the cosign role (restarts, disabled origins, limits).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { LogsConfigError } from '../../src/cosign/errors.ts';
import { parseLogList } from '../../src/cosign/log-list.ts';
import { resolveLogKey } from '../../src/cosign/log-keys.ts';
import { planListImport, type KnownListLog, type ListLimits } from '../../src/cosign/list-merge.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { LogListImporter } from '../../src/cosign/list-import.ts';
import { listSource } from '../../src/cosign/list-source.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { SyntheticLog, seq, startCosign, WITNESS_NAME } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const freshVkey = (name: string, type = SIG_TYPE_ED25519): string => formatVkey(name, type as 1, generateEd25519().publicKey);

// FiloSottile/torchwood cmd/litewitness/testdata/loglist.txt (research/pq-cosign.md §2.7), with qpd
// lines added where the upstream lists have none (SPEC §5.5 requires qpd).
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
qpd 86400

# existing log, same key
vkey ${vkey2EF}
origin example.com/foo
qpd 24
`;
const LIST_2 = `${LIST_1}
# known log, different key
vkey ${vkey80F}
origin ${sigsumF48}
qpd 86400
`;

const TORCHWOOD_MLDSA_VKEY =
  'example.com/mldsa-log+b5df45c5+BuhtcL97l3dcitjZ8Y9J54gmQ1TWn/BMF0yePKpTzhlFCkN6ouJDf+9kT9wve4/Y+JGXBUjlRvktAynZ6XOQSO+fOaxyPOQAwrtbZKYXnZWSQj9gHPz18q6brnckUv87Rsk/m5GIBvH8J3ymxZjUQS+DnAUIbctLsG2DD6I/ou0JtXpPLvfGhPDTkwc9QeFyBLBa02Pr9uuWCMohciLqRiFUo5+leUUDKba1g5TYjOjK/VKfntpdbEwoqhTJTG4armjUeXdrYDHeaaMaCAnW5F0lMWYsHjqzRpKjeTjgItseaWKSm+ga/mzTAgqsbo5Ob/AwaXf4Av7/mN+ZM6vHON/NE7Ip5vpXpCiNb9YbEQavn+fjNucFxffCacvzXghvaaQ+3C/5h5lpR8jeajBFsFIOvdkYKizt29lCjqZDkYQgVfB9nWeH6rbayMkBdDpmRH03cI+urD0Eb5zvRuGJn3PgfwdyQJ3WcDH5Gqn5dkKs5NIVMBC+FfKeD47ruAIruda4JiiYCAxZbWgwzTI80N5lZFHEndmxKWaw6z/QyphuYkNyvZVZ0R3kH3JN4jdy9KKpNtFoQqnoBTGeEE/fXEEs5ByPlKnrrefRgWTqxssE4nPzHHr5GGgv/NKNTXNKI4LvNPH5yO3Vv/gIiDZxPPc1Jen8uKkmc0s3kT7XtcuWTlb+zdQeSme9ODj0IoVu29Eav2OsGJpReX7vZx9i2fVfHEMHY5nFew8L5RxcWmZFFiYhMFZnLvk/SWmHcwr3DhzZchrODhabHQ+S6S49Ws+5aoBBPM3mOrSSKHgobdI7BJrdzdT07kjzyiyS9Gyv8iylUHHMuuh1O05RNRcX5SXmenwGDPcT9HuLS+hoesO0FQgEt+jAR7vVyUUU2C6g6FC6QNfHL/EUsulvYIAS5fOK7acOeVnoJlpI57Bq+uzLZm6g7IZD0xxQwZPYyT4ek99l9HxDSrVnU0rAr+Tq5vVh5YxvDkQVWroYIWek/AI5awjmhgpW4LPapBhLk2ipkF5CmU3T0cm3ET5f14gYQZfz23nCsmZ7qyqiQilgOxJzVYacVoGAStGzJNY1wEf26MADW5McyQzYI/3Fpaa4Ay6p2yFmcJMfpqZnu4flgWMqN1UpMbbJ6I7hOrCFWryExK/nvSbRrErHTkPz2wvVfI+enbFz86c0iNb7naQKv6LoIZYEHFOCEsWGL/sCChn6BR4nk1qAakyXEQwi96CkIa3AX562F8lhw6CU4x7T+NWqi2AWfEXImJenORhMP69hGIFsiLAVIjHtsWtJOi8cu+Brg1bFERkB4ryUTrLf/jFeb6KifZ+s8PZWclDaOLMINZ3E78a5u6AzgXpigJsAJ1A4BY89muedrW2O8kFyh3TTTKyY4kedCW6L+8bFHV2Gce25ZulNC1mZs41XAI9CteeYaWaiL7uGMXgyQ73wr4ftwAEMdsoQVQsQriutS1AhpBGvjzPCwD5LC5p1fa0WXBQ1puuaNqr3IJodmDLhEIAsZcv1gdXMg8EQg9QLqgLLrBijU3GxFUQllS8lpQ4TLwFYUJ41+qt28JEeky/VzSEeQd/qob8cbyNM44o7INB+lbhEXEGWvVO8Ak+uWMY+PRKeY9OQcE6E27Nf3eUoHQXkwmXkjGgj0NKeXBIJc1k/Ws6WDbsU4graVKk5FQjwULcRngOpyiJQ/n8sObkAPXr+1rImK3lQJnxif/B6p5/tsh4rrcUht4yVIvFAaqsgAAE=';

const LIMITS: ListLimits = { maxQpd: 86_400, maxNew: 50_000, maxOrigins: 200_000 };

/** Plan a list against `known` (resolving the keys it needs, as the importer does). */
function plan(
  text: string,
  known: ReadonlyMap<string, KnownListLog>,
  opts: { source?: string; limits?: Partial<ListLimits>; imported?: number } = {},
) {
  const { entries, skipped } = parseLogList(text);
  const p = planListImport({
    source: opts.source ?? 'l',
    entries,
    known,
    importedCount: opts.imported ?? [...known.values()].filter((k) => k.source !== undefined).length,
    resolve: resolveLogKey,
    limits: { ...LIMITS, ...opts.limits },
  });
  return { ...p, parseSkips: skipped };
}

void test('logs/v0 parsing: comments, unknown keys, origin default; only a bad header refuses the list', () => {
  const { entries, skipped } = parseLogList(LIST_0);
  assert.deepEqual(skipped, []);
  assert.deepEqual(entries, [
    { line: 7, vkey: vkeyF48, origin: sigsumF48, qpd: 86400, contact: 'https://tlog.foo.org/contact' },
    { line: 13, vkey: vkey2EF, origin: 'example.com/foo', qpd: 24, contact: 'sysadmin (at) bar.org' },
  ]);
  assert.deepEqual(parseLogList('  logs/v0  \n\n# nothing\n'), { entries: [], skipped: [] });
  assert.deepEqual(parseLogList('logs/v0\r\n').entries, []);
  for (const bad of ['', '# only a comment\n', `vkey ${vkeyF48}\nqpd 1\n`, 'logs/v1\n', 'LOGS/V0\n', 'logs/v0 extra\n']) {
    assert.throws(
      () => parseLogList(bad),
      (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_log_list',
      JSON.stringify(bad),
    );
  }
});

void test('logs/v0 parsing: each bad entry is skipped with its reason, the others are kept', () => {
  const mldsa = TORCHWOOD_MLDSA_VKEY;
  const long = `x.example/${'o'.repeat(250)}`;
  const text = [
    'logs/v0',
    'qpd 5', // before any vkey: ignored
    `vkey ${freshVkey('a.example/log')}`, // 3: no qpd
    `vkey ${freshVkey('b.example/log')}`, // 4: qpd 0
    'qpd 0',
    `vkey ${freshVkey('c.example/log')}`, // 6: leading zero
    'qpd 012',
    `vkey ${freshVkey('d.example/log')}`, // 8: 2^31
    `qpd ${2 ** 31}`,
    `vkey ${freshVkey('e.example/log')}`, // 10: origin twice
    'origin e1',
    'origin e2',
    'qpd 1',
    'vkey', // 14: empty vkey
    'qpd 1',
    `vkey ${freshVkey('own.example/anchors')}`, // 16
    'qpd 1',
    `vkey ${freshVkey('f.example/log')}`, // 18: the witness name as origin
    `origin ${WITNESS_NAME}`,
    'qpd 1',
    `vkey ${freshVkey('g.example/log')}`, // 21: long origin
    `origin ${long}`,
    'qpd 1',
    `vkey ${freshVkey('h.example/log')}`, // 24: good, max qpd
    `qpd ${2 ** 31 - 1}`,
    `vkey ${mldsa}`, // 26: parses here; its key is resolved later
    'qpd 1',
  ].join('\n');
  const rules = { ownOrigin: 'own.example/anchors', witnessName: WITNESS_NAME, maxOriginBytes: 255 };
  const { entries, skipped } = parseLogList(text, rules);
  assert.deepEqual(
    skipped.map((s) => [s.line, s.code]),
    [
      [3, 'missing_qpd'],
      [4, 'invalid_qpd'],
      [6, 'invalid_qpd'],
      [8, 'invalid_qpd'],
      [10, 'duplicate_field'],
      [14, 'invalid_vkey'],
      [16, 'own_origin'],
      [18, 'witness_name'],
      [21, 'origin_too_long'],
    ],
  );
  assert.deepEqual(
    entries.map((e) => [e.line, e.origin, e.qpd]),
    [
      [24, 'h.example/log', 2 ** 31 - 1],
      [26, 'example.com/mldsa-log', 1],
    ],
  );
  // Without an ML-DSA-44 cosign key (no maxOriginBytes) the long origin is fine.
  assert.ok(parseLogList(text, { ...rules, maxOriginBytes: undefined }).entries.some((e) => e.origin === long));
  // Keys: 0x01 and (with ML-DSA support) 0x06; 0x04 and broken vkeys are refused.
  assert.equal(resolveLogKey(vkeyF48).ok, true);
  const r04 = resolveLogKey(freshVkey('w.example', SIG_TYPE_COSIGNATURE_V1));
  assert.equal(!r04.ok && r04.code, 'unsupported_key_type');
  const rBad = resolveLogKey(vkeyF48.replace('9bc54c7f', '9bc54c7e'));
  assert.equal(!rBad.ok && rBad.code, 'invalid_vkey');
  // torchwood's ML-DSA-44 log key (research/pq-cosign.md Appendix A.1, key ID b5df45c5): a log
  // key where this build verifies ML-DSA-44, else skipped as `mldsa_unsupported` (never another code).
  const r06 = resolveLogKey(TORCHWOOD_MLDSA_VKEY);
  if (r06.ok) assert.deepEqual([r06.verifier.type as number, r06.verifier.keyId], [0x06, 0xb5df45c5]);
  else assert.equal(r06.code, 'mldsa_unsupported', r06.message);
  // In a list: imported with its 0x06 key, or skipped as mldsa_unsupported.
  const p06 = plan(`logs/v0\nvkey ${TORCHWOOD_MLDSA_VKEY}\nqpd 5\n`, new Map());
  if (r06.ok)
    assert.deepEqual(
      p06.added.map((a) => [a.origin, a.verifiers[0]!.type as number]),
      [['example.com/mldsa-log', 0x06]],
    );
  else
    assert.deepEqual(
      p06.skipped.map((k) => k.code),
      ['mldsa_unsupported'],
    );
});

void test('import plan: the torchwood loglist.txt sequence ends in its three origins with one conflict', () => {
  const known = new Map<string, KnownListLog>();
  const apply = (text: string) => {
    const p = plan(text, known);
    for (const a of p.added) known.set(a.origin, { vkeys: a.verifiers.map((v) => v.vkey), source: 'l', qpd: a.qpd });
    for (const c of p.qpdChanges) known.set(c.origin, { ...known.get(c.origin)!, qpd: c.qpd });
    return p;
  };
  let p = apply(LIST_0);
  assert.deepEqual(
    p.added.map((a) => [a.origin, a.verifiers.map((v) => v.vkey), a.qpd]),
    [
      [sigsumF48, [vkeyF48], 86400],
      ['example.com/foo', [vkey2EF], 24],
    ],
  );
  p = apply(LIST_1);
  assert.deepEqual(
    p.added.map((a) => a.origin),
    [sigsumFAE],
  );
  assert.deepEqual(p.conflicts, []);
  p = apply(LIST_2);
  assert.deepEqual(p.added, []);
  assert.deepEqual(p.conflicts, [{ line: 13, origin: sigsumF48, vkey: vkey80F }]);
  assert.deepEqual([...known.keys()].sort(), ['example.com/foo', sigsumF48, sigsumFAE]);
  assert.deepEqual([...known.get(sigsumF48)!.vkeys!], [vkeyF48], 'a list never changes a known log’s keys');
  // A list that no longer names a log removes nothing; a changed qpd of its own import is followed.
  assert.deepEqual(apply('logs/v0\n').added, []);
  assert.equal(known.size, 3);
  p = apply(`logs/v0\nvkey ${vkey2EF}\norigin example.com/foo\nqpd 48\n`);
  assert.deepEqual(p.qpdChanges, [{ origin: 'example.com/foo', qpd: 48 }]);
  // …but not from another list (two lists would take turns), and not for a logs-file origin.
  assert.deepEqual(plan(`logs/v0\nvkey ${vkey2EF}\norigin example.com/foo\nqpd 7\n`, known, { source: 'other' }).qpdChanges, []);
  const configured = new Map<string, KnownListLog>([['example.com/foo', { vkeys: [vkey2EF], source: undefined, qpd: 5 }]]);
  assert.deepEqual(plan(`logs/v0\nvkey ${vkey2EF}\norigin example.com/foo\nqpd 7\n`, configured).qpdChanges, []);
  // A logs-file origin listed with another key is a conflict too; a disabled one is not checked.
  assert.equal(plan(`logs/v0\nvkey ${vkey80F}\norigin example.com/foo\nqpd 7\n`, configured).conflicts.length, 1);
  const disabled = new Map<string, KnownListLog>([['example.com/foo', { vkeys: undefined, source: undefined, qpd: undefined }]]);
  const pd = plan(`logs/v0\nvkey ${vkey80F}\norigin example.com/foo\nqpd 7\n`, disabled);
  assert.deepEqual([pd.added, pd.conflicts], [[], []]);
});

void test('import plan: an origin listed several times gets the union of its keys and the smallest qpd, clamped', () => {
  const k2 = freshVkey('example.com/log');
  const k3 = freshVkey('other-name.example');
  const text = `logs/v0\nvkey ${freshVkey('example.com/log').replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\norigin example.com/log\nqpd 1\nvkey ${k2}\nqpd ${2 ** 31 - 1}\nvkey ${k3}\norigin example.com/log\nqpd 100000\nvkey ${k2}\nqpd 90000\n`;
  const p = plan(text, new Map());
  assert.equal(p.added.length, 1);
  assert.deepEqual(
    p.added[0]!.verifiers.map((v) => v.vkey),
    [k2, k3],
  );
  assert.equal(p.added[0]!.qpd, 86400, 'min(2^31−1, 100000, 90000) = 90000, clamped to --logs-list-max-qpd');
  assert.deepEqual(
    p.skipped.map((s) => [s.line, s.code]),
    [[2, 'invalid_vkey']],
    'the entry with a wrong key ID adds neither key nor qpd',
  );
  assert.equal(plan(text, new Map(), { limits: { maxQpd: 1_000_000 } }).added[0]!.qpd, 90000);
});

void test('import plan: at most --logs-list-max-new per read (the rest wait) and --logs-list-max-origins in all', () => {
  const logs = Array.from({ length: 7 }, (_, i) => freshVkey(`n${i}.example/log`));
  const text = `logs/v0\n${logs.map((v) => `vkey ${v}\nqpd 10\n`).join('')}`;
  const known = new Map<string, KnownListLog>();
  let p = plan(text, known, { limits: { maxNew: 3, maxOrigins: 5 } });
  assert.deepEqual(
    p.added.map((a) => a.origin),
    ['n0.example/log', 'n1.example/log', 'n2.example/log'],
  );
  assert.deepEqual([p.deferred, p.overLimit, p.origins], [2, 2, 7]);
  for (const a of p.added) known.set(a.origin, { vkeys: a.verifiers.map((v) => v.vkey), source: 'l', qpd: a.qpd });
  p = plan(text, known, { limits: { maxNew: 3, maxOrigins: 5 } });
  assert.deepEqual(
    p.added.map((a) => a.origin),
    ['n3.example/log', 'n4.example/log'],
  );
  assert.deepEqual([p.deferred, p.overLimit], [0, 2]);
});

void test('importer: file lists through the role; imports survive a restart without the source; "disabled" in --logs → 404', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = new SyntheticLog('lists.example/log', ed25519KeyFromSeed(seq(0x50)));
    const list = join(dir, 'log-list');
    writeFileSync(list, LIST_0);
    let now = 1_800_000_000_000;
    let h = await startCosign({ dir, logsLists: [list], now: () => now });
    try {
      const metric = async (name: string): Promise<string[]> =>
        (await h.get('/metrics')).text.split('\n').filter((l) => l.startsWith(name));
      assert.deepEqual([...h.role.logs.current().keys()].sort(), ['example.com/foo', sigsumF48]);
      const source = h.role.lists.sources[0]!;
      writeFileSync(list, LIST_1);
      assert.equal((await h.role.lists.read(source)).outcome, 'ok');
      writeFileSync(list, LIST_2);
      now += 1000;
      const r = await h.role.lists.read(source);
      assert.equal(r.plan?.conflicts.length, 1);
      assert.deepEqual([...h.role.logs.current().keys()].sort(), ['example.com/foo', sigsumF48, sigsumFAE]);
      assert.deepEqual(
        h.role.logs
          .current()
          .get(sigsumF48)!
          .verifiers.map((v) => v.vkey),
        [vkeyF48],
      );
      assert.deepEqual(await metric('logs_list_conflicts_total'), [`logs_list_conflicts_total{source="${list}"} 1`]);
      assert.deepEqual(await metric('logs_list_fetches_total'), [`logs_list_fetches_total{source="${list}",outcome="ok"} 3`]);
      assert.deepEqual(await metric('logs_list_origins'), [`logs_list_origins{source="${list}"} 3`]);
      assert.deepEqual(await metric('logs_list_last_success_seconds'), [`logs_list_last_success_seconds{source="${list}"} 1800000001`]);
      // Stored: vkeys, qpd, source, time; each at size 0 (never cosigned).
      const rows = await h.store.cosign.listImportedLogs();
      assert.deepEqual(
        rows.map((x) => [x.origin, x.vkeys, x.qpd, x.source, x.importedAt]),
        [
          [sigsumF48, [vkeyF48], 86400, list, 1800000000],
          ['example.com/foo', [vkey2EF], 24, list, 1800000000],
          [sigsumFAE, [vkeyFAE], 86400, list, 1800000000],
        ],
      );
      for (const x of rows) assert.equal(await h.store.cosign.getOrigin(x.origin), undefined);
      // A bad header keeps the state (and counts).
      writeFileSync(list, `logs/v1\nvkey ${log.vkey}\nqpd 10\n`);
      assert.equal((await h.role.lists.read(source)).outcome, 'invalid_log_list');
      assert.equal(h.role.logs.current().size, 3);
      assert.deepEqual(await metric('logs_list_fetches_total{source="' + list + '",outcome="invalid_log_list"}'), [
        `logs_list_fetches_total{source="${list}",outcome="invalid_log_list"} 1`,
      ]);
      // A log of ours, imported, is cosigned.
      writeFileSync(list, `logs/v0\nvkey ${log.vkey}\nqpd 100\n`);
      await h.role.lists.read(source);
      assert.equal((await h.post(log.request(0, 3))).status, 200);
    } finally {
      await h.close();
    }
    // Restart without the source: the imports are still known and the state resumes.
    h = await startCosign({ dir });
    try {
      assert.deepEqual([...h.role.logs.current().keys()].sort(), ['example.com/foo', log.origin, sigsumF48, sigsumFAE]);
      assert.equal(h.role.logs.current().get(log.origin)!.source, `list ${list}`);
      assert.equal((await h.post(log.request(3, 5))).status, 200);
    } finally {
      await h.close();
    }
    // Disabled in --logs: 404 as unknown; the stored state stays and resumes once enabled again.
    h = await startCosign({ dir, logsDoc: { logs: [{ origin: log.origin, disabled: true }] } });
    try {
      const res = await h.post(log.request(5, 6));
      assert.equal(res.status, 404);
      assert.equal((await h.store.cosign.getOrigin(log.origin))?.size, 5);
    } finally {
      await h.close();
    }
    h = await startCosign({ dir, logsDoc: { logs: [] } });
    try {
      assert.equal((await h.post(log.request(5, 6))).status, 200);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});

void test('importer: a file source that fails at start refuses start-up', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const bad = join(dir, 'bad-list');
    writeFileSync(bad, 'not a list\n');
    await assert.rejects(
      startCosign({ dir, logsLists: [bad] }),
      (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_log_list' && /expected the header/.test(e.message),
    );
    await assert.rejects(
      startCosign({ dir, dbName: 'b.db', logsLists: [join(dir, 'missing')] }),
      (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_log_list',
    );
  } finally {
    cleanup();
  }
});

void test('importer: replicas of a shared store see each other’s imports (first import wins); timers re-read every interval', async () => {
  const { dir, cleanup } = tempDir();
  const store = SqliteStore.open(join(dir, 'shared.db'));
  try {
    const a = join(dir, 'list-a');
    const b = join(dir, 'list-b');
    const k1 = freshVkey('shared.example/log');
    const k2 = freshVkey('shared.example/log');
    writeFileSync(a, `logs/v0\nvkey ${k1}\nqpd 10\n`);
    writeFileSync(b, 'logs/v0\n');
    const replica = (src: string) =>
      new LogListImporter({ store: store.cosign, sources: [listSource(src, false)], sharedStore: true, intervalSeconds: 0.05 });
    const r1 = replica(a);
    const r2 = replica(b);
    await r2.start();
    await r1.start();
    assert.deepEqual([...r2.imported().keys()], [], 'r2 started before r1 imported');
    // r2 learns r1's import at its next read, and a different key for that origin is a conflict.
    writeFileSync(b, `logs/v0\nvkey ${k2}\norigin shared.example/log\nqpd 10\n`);
    const res = await r2.read(r2.sources[0]!);
    assert.deepEqual(res.added, []);
    assert.equal(res.plan?.conflicts.length, 1);
    assert.deepEqual(
      r2
        .imported()
        .get('shared.example/log')!
        .verifiers.map((v) => v.vkey),
      [k1],
    );
    // Timers: a new log in list a is imported within a few intervals.
    const k3 = freshVkey('timer.example/log');
    writeFileSync(a, `logs/v0\nvkey ${k1}\nqpd 10\nvkey ${k3}\nqpd 10\n`);
    r1.startTimers();
    const deadline = Date.now() + 5000;
    while (!r1.imported().has('timer.example/log') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    r1.stop();
    assert.ok(r1.imported().has('timer.example/log'));
  } finally {
    await store.close();
    cleanup();
  }
});

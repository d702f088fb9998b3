// The page renderers without a browser: escaping of every hostile value, the CSP hash of the one
// stylesheet, shell quoting of copy-paste commands, Host header validation, the checkpoint clock,
// the chart on degenerate input, and the monitor report's evidence downloads (data: URLs that
// decode to the exact evidence).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Registry } from 'prom-client';
import type { AnchorWire } from '../../src/anchor/types.ts';
import type { BridgeDeps, KeySource } from '../../src/bridge/deps.ts';
import { bridgeMetrics } from '../../src/bridge/metrics.ts';
import { renderBridgeStatusPage } from '../../src/bridge/status-page.ts';
import type { KeyEntry } from '../../src/bridge/keyring.ts';
import { TokenService } from '../../src/bridge/service.ts';
import type { SigningKey } from '../../src/bridge/signing.ts';
import { renderMonitorReport, type ReportPoll, type ReportState } from '../../src/client/monitor-report.ts';
import { stepChart } from '../../src/pages/chart.ts';
import { formatDuration, formatUtc } from '../../src/pages/format.ts';
import { dataUrl, displayHost, escapeHtml, html, joinHtml, raw, safeHref, shellCommand, shellQuote } from '../../src/pages/html.ts';
import { META_CSP, PAGE_CSP, STYLE_HASH, STYLESHEET, renderPage } from '../../src/pages/layout.ts';
import { CheckpointClock, commandBaseUrl, renderWitnessPage, type WitnessPageData } from '../../src/witness/status-page.ts';

const EVIL = `<script>alert("x")</script>`;
const EVIL_ATTR = `" onmouseover="alert(1)`;

/** No markup from a hostile value survives: no script/img/svg-onload tag and no injected attribute. */
function assertInert(page: string): void {
  assert.doesNotMatch(page, /<script/i);
  assert.doesNotMatch(page, /<img/i);
  assert.doesNotMatch(page, /<b>/);
  for (const tag of page.match(/<[a-zA-Z][^>]*>/g) ?? []) {
    assert.doesNotMatch(tag, /\son[a-z]+\s*=/i, `event-handler attribute in ${tag}`);
    assert.doesNotMatch(tag, /javascript:/i, tag);
  }
}

function styleOf(page: string): string {
  const m = /<style>([\s\S]*?)<\/style>/.exec(page);
  assert.ok(m !== null);
  return m[1]!;
}

void test('escapeHtml and the html template escape every interpolated value', () => {
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  const list = ['<i>', 2, null, undefined, false, [EVIL, raw('<br>')]];
  assert.equal(
    html`<p title="${EVIL_ATTR}">${list}</p>`.value,
    '<p title="&quot; onmouseover=&quot;alert(1)">&lt;i&gt;2&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<br></p>',
  );
  assert.equal(html`${html`<b>${'<'}</b>`}`.value, '<b>&lt;</b>', 'nested SafeHtml is kept as markup');
  assert.equal(joinHtml(['<a>', 'b'], html`<br>`).value, '&lt;a&gt;<br>b');
  assert.equal(html`${10n} ${true}`.value, '10 true');
});

void test('safeHref keeps http(s) and same-origin paths only', () => {
  assert.equal(safeHref('https://bridge.example/.well-known/jwks.json'), 'https://bridge.example/.well-known/jwks.json');
  assert.equal(safeHref('/health'), '/health');
  for (const bad of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'data:text/html,<script>',
    '//evil.example/x',
    '/\\evil.example',
    'vbscript:x',
    '',
  ])
    assert.equal(safeHref(bad), '#', bad);
});

void test('shell quoting: what is copied is what is shown', () => {
  assert.equal(shellQuote('example.com/log+01882cac+ASVD/xCV='), 'example.com/log+01882cac+ASVD/xCV=');
  assert.equal(shellQuote('$(rm -rf ~)'), `'$(rm -rf ~)'`);
  assert.equal(shellQuote(`it's`), `'it'\\''s'`);
  assert.equal(shellQuote('a b;c|d&e`f`'), `'a b;c|d&e\`f\`'`);
  assert.equal(shellQuote(''), `''`);
  assert.equal(shellCommand(['curl', '$WITNESS_URL/log/checkpoint']), 'curl "$WITNESS_URL"/log/checkpoint');
  assert.equal(shellCommand(['x', '$HEAD']), 'x "$HEAD"');
  assert.equal(shellCommand(['x', '$(id)']), `x '$(id)'`, 'only $CAPITALS is kept as a variable');
});

void test('displayHost accepts host[:port] only; commandBaseUrl picks the scheme', () => {
  const ok: [string, string][] = [
    ['witness.example.org', 'witness.example.org'],
    ['Witness.Example.ORG:8420', 'witness.example.org:8420'],
    ['127.0.0.1:8420', '127.0.0.1:8420'],
    ['[::1]:8420', '[::1]:8420'],
    ['localhost', 'localhost'],
    ['witness.example.org.', 'witness.example.org'],
  ];
  for (const [h, want] of ok) assert.equal(displayHost(h), want, h);
  for (const bad of [
    undefined,
    '',
    'evil.example/<script>',
    'a b',
    'host:0',
    'host:65536',
    'host:08420',
    'user@host',
    'host"x',
    '[not-ipv6]',
    '-bad.example',
    `${'a'.repeat(64)}.example`,
    'host:80:80',
    "host'",
    '[1.2.3.4]',
  ]) {
    assert.equal(displayHost(bad), undefined, String(bad));
  }
  assert.deepEqual(commandBaseUrl({ host: '127.0.0.1:8420', encrypted: false }), { url: 'http://127.0.0.1:8420', usable: true });
  assert.deepEqual(commandBaseUrl({ host: 'witness.example.org', encrypted: false }), { url: 'https://witness.example.org', usable: true });
  assert.deepEqual(commandBaseUrl({ host: 'witness.example.org:8420', encrypted: false }), {
    url: 'http://witness.example.org:8420',
    usable: true,
  });
  assert.deepEqual(commandBaseUrl({ host: 'witness.example.org:8420', encrypted: true }), {
    url: 'https://witness.example.org:8420',
    usable: true,
  });
  assert.deepEqual(commandBaseUrl({ host: `x${EVIL}`, encrypted: false }), { url: '$WITNESS_URL', usable: false });
});

void test('CSP: one stylesheet allowed by its SHA-256 hash, nothing else; the meta copy omits frame-ancestors', () => {
  const page = renderPage({ title: 't', heading: 'h', body: html`<p>x</p>` });
  const style = styleOf(page);
  assert.equal(style, STYLESHEET);
  assert.equal(STYLE_HASH, `'sha256-${createHash('sha256').update(style, 'utf8').digest('base64')}'`);
  assert.equal(
    PAGE_CSP,
    `default-src 'none'; style-src ${STYLE_HASH}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  assert.ok(page.includes(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">`));
  assert.doesNotMatch(PAGE_CSP, /unsafe|script-src|\*/);
  assert.doesNotMatch(META_CSP, /frame-ancestors/);
  assert.equal((page.match(/<style>/g) ?? []).length, 1);
  assert.doesNotMatch(page, /style="/, 'no inline style attribute (the hash does not cover them)');
});

void test('CheckpointClock: exact when this process signed the size, else a bound from when it first saw it', () => {
  const c = new CheckpointClock();
  c.seen(4, 1_000);
  assert.deepEqual(c.signedAt(4, 5_000), { atMs: 1_000, exact: false });
  c.signed(5, 6_000);
  assert.deepEqual(c.signedAt(5, 9_000), { atMs: 6_000, exact: true });
  // signed by another replica: first seen now, and that time is kept
  assert.deepEqual(c.signedAt(7, 10_000), { atMs: 10_000, exact: false });
  assert.deepEqual(c.signedAt(7, 12_000), { atMs: 10_000, exact: false });
});

void test('format helpers', () => {
  assert.deepEqual([0, 59, 60, 61, 3600, 3660, 172_800, 180_000, -30].map(formatDuration), [
    '0 s',
    '59 s',
    '1 min',
    '1 min 1 s',
    '1 h',
    '1 h 1 min',
    '2 d',
    '2 d 2 h',
    'in 30 s',
  ]);
  assert.equal(formatUtc(1_767_225_600.9), '2026-01-01T00:00:00Z');
});

function witnessData(over: Partial<WitnessPageData> = {}): WitnessPageData {
  return {
    name: `w.example/${EVIL}`,
    roles: ['anchor', 'cosign'],
    version: '0.1.0',
    witnessKeyHex: '8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
    logOrigin: `w.example/${EVIL}/anchors`,
    logVkey: `w.example/${EVIL}/anchors+15082f6b+AYqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c`,
    cosignVkeys: [`w.example/${EVIL}+232b0647+BEgHWll+choVbi4Hmd5cwMUyTcbn6vHN1GJQho7FMhXd`],
    log: {
      size: 12,
      checkpoint: `w.example/${EVIL}/anchors\n12\nAAAA\n\n— w.example/${EVIL}/anchors sig\n`,
      signedAtMs: 1_767_225_000_000,
      signedExact: true,
    },
    counts: { seeds: 3, anchors: 11, duplicities: 1 },
    cosign: {
      logs: [
        {
          origin: `hostile.example/${EVIL} <img src=x onerror=alert(1)>`,
          source: `list /etc/${EVIL}.list`,
          size: 5,
          lastCosigned: 1_767_225_500,
          qpd: 86_400,
          counted: 2,
          refused: 1,
        },
        { origin: 'example.com/log', source: 'logs file', size: null, lastCosigned: null, qpd: undefined, counted: 0, refused: 0 },
      ],
      total: 2,
    },
    baseUrl: 'https://witness.example.org',
    hostUsable: true,
    runningDigest: undefined,
    nowMs: 1_767_225_600_000,
    startedAtMs: 1_767_220_000_000,
    ...over,
  };
}

void test('witness page: every hostile value is escaped, including inside commands and JSON', () => {
  const page = renderWitnessPage(witnessData());
  assertInert(page);
  assert.ok(page.includes('w.example/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  assert.ok(page.includes('hostile.example/&lt;script&gt;'));
  assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt;'));
  assert.ok(page.includes('did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX'), 'the witness key as did:key');
  assert.ok(page.includes('signed 10 min ago (2025-12-31T23:50:00Z)'));
  assert.ok(page.includes('--witness https://witness.example.org --threshold 1'));
  // the vkey with a hostile name is single-quoted for the shell, then HTML-escaped
  assert.ok(page.includes(`--vkey &#39;w.example/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;/anchors+15082f6b+`));
  assert.match(page, /86\u202f400\/day \(burst 3\u202f600\)/);
  assert.match(page, /2 counted, 1 refused \(429\)/);
  assert.match(page, /href="\/[0-9a-f]{64}\/checkpoint"/, 'monitoring link by the SHA-256 of the origin');
  assert.equal(styleOf(page), STYLESHEET);
});

void test('witness page: no usable Host → $WITNESS_URL; unknown signing time → "at least"; cosign off', () => {
  const page = renderWitnessPage(
    witnessData({
      baseUrl: '$WITNESS_URL',
      hostUsable: false,
      cosign: null,
      cosignVkeys: [],
      roles: ['anchor'],
      log: { size: 0, checkpoint: null, signedAtMs: 1_767_225_540_000, signedExact: false },
    }),
  );
  assertInert(page);
  assert.ok(page.includes('party submit --state chain.json --witness &quot;$WITNESS_URL&quot;'));
  assert.ok(page.includes('Set <code>WITNESS_URL</code> first'));
  assert.ok(page.includes('signed at least 1 min ago'));
  assert.ok(!page.includes('Logs cosigned'));
  assert.ok(page.includes('No checkpoint yet.'));
});

void test('witness page: the KERI witness section (role kel) shows prefix, OOBI URLs and counts, escaped; absent without the role', () => {
  const kel = {
    prefix: 'BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz',
    held: 3,
    events: 9,
    witnessed: 7,
    escrowed: 1,
    duplicities: 2,
    urls: ['https://w.example/<script>'],
    stamp: '2026-11-27T12:00:00.000000+00:00',
    oobis: ['https://w.example/<script>/oobi/BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz/controller'],
  };
  const page = renderWitnessPage(witnessData({ kelWitness: kel }));
  assertInert(page);
  assert.ok(page.includes('id="kel-witness"'));
  assert.ok(page.includes('https://w.example/&lt;script&gt;/oobi/BJjH1MCDssEZMnORskF34AwOFDgDL47513GivRvd_QKz/controller'));
  assert.match(page, /id="kel-witness-held">3</);
  assert.match(page, /id="kel-witness-receipted">7<\/span> receipted, 9 stored/);
  assert.match(page, /id="kel-witness-duplicities">2</);
  assert.match(page, /id="kel-witness-escrowed">1<\/span> event waiting/);
  assert.ok(page.includes('URL set of 2026-11-27T12:00:00.000000+00:00'));
  const none = renderWitnessPage(witnessData({ kelWitness: { ...kel, urls: [], oobis: [], stamp: null } }));
  assert.ok(none.includes('no <code>--kel-url</code> was ever given'));
  assert.ok(!renderWitnessPage(witnessData()).includes('id="kel-witness"'));
});

void test('bridge page: keys with ages, policy, aws-setup; hostile audience escaped', () => {
  const now = 1_767_225_600;
  const kid = (c: string): string => c.repeat(43);
  const entries: KeyEntry[] = [
    { kid: kid('A'), state: 'active', notBefore: now - 7200, retireAfter: null },
    { kid: kid('N'), state: 'next', notBefore: now + 1800, retireAfter: null },
    { kid: kid('R'), state: 'retired', notBefore: now - 90_000, retireAfter: now + 600 },
  ];
  const active = { kid: kid('A'), alg: 'ES256' } as unknown as SigningKey;
  const keys: KeySource = {
    active,
    entries,
    jwks: () => ({ keys: entries.map((e) => ({ kty: 'EC', alg: e.state === 'retired' ? 'RS256' : 'ES256', use: 'sig', kid: e.kid })) }),
    algs: () => ['ES256', 'RS256'],
  };
  const policy = {
    issuer: 'https://bridge.example',
    audiences: [`aud.example/${EVIL}`, 'sts.amazonaws.com'],
    defaultTtl: 900,
    maxTtl: 3600,
    proofOfPossession: false,
    awsSessionTags: true,
    startedAt: 0,
  };
  const service = new TokenService({ policy, trustedRoots: () => undefined, signingKey: () => active });
  const deps: BridgeDeps = { service, keys, issuer: { issuer: policy.issuer, pathPrefix: '', loopback: false } };
  const registry = new Registry();
  const metrics = bridgeMetrics(registry, deps);
  metrics.issued.inc({ alg: 'ES256' }, 3);
  metrics.refused.inc({ code: 'pop_invalid' });
  // The page counts from the bridge's own totals: a registry reset (or shared, or replaced) changes nothing.
  registry.resetMetrics();
  const page = renderBridgeStatusPage(deps, metrics, now * 1000);
  assertInert(page);
  assert.ok(page.includes('aud.example/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  assert.ok(page.includes('signing since 2025-12-31T22:00:00Z'));
  assert.ok(page.includes('(2 h ago)'), 'active key age');
  assert.ok(page.includes('signs from 2026-01-01T00:30:00Z'), 'next key');
  assert.ok(page.includes('retired ≈ 55 min ago; unpublished after 2026-01-01T00:10:00Z'), 'retired = retire_after − (max TTL + 300 s)');
  assert.ok(
    page.includes(
      'token-bridge aws-setup --issuer https://bridge.example --subject &quot;$ROOT_DID&quot; --audience sts.amazonaws.com --connect --format cli',
    ),
  );
  assert.ok(!page.includes('This issuer is not https://'));
  assert.ok(page.includes('<strong>off</strong>'), 'proof of possession off is highlighted');
  assert.match(page, /id="tokens-issued"><div class="label">tokens issued<\/div><div class="value">3</);
  assert.match(page, /id="tokens-refused"><div class="label">refusals<\/div><div class="value">1</);
  assert.ok(page.includes(`href="https://bridge.example/.well-known/openid-configuration"`));
});

void test('chart: degenerate input renders finite coordinates, labels escaped', () => {
  for (const series of [
    [],
    [{ label: EVIL, points: [] }],
    [{ label: 'one', points: [{ t: 100, v: 3 }] }],
    [
      {
        label: 'gap',
        points: [
          { t: 1, v: null },
          { t: 2, v: 0 },
          { t: 90_000, v: null },
        ],
      },
    ],
  ]) {
    const svg = stepChart({ title: EVIL, series, markers: [{ t: 50, v: 1, label: EVIL, severity: 'alert' }], end: 200 }).value;
    assert.doesNotMatch(svg, /NaN|Infinity|<script/);
    assert.ok(svg.startsWith('<svg class="chart" role="img"'));
  }
});

void test('monitor report: findings, evidence as data: URLs that decode to the exact bytes, hostile text escaped', () => {
  const seed = 'ab'.repeat(32);
  const witness = `w1.example/${EVIL}`;
  const prev = `w1.example/anchors\n3\nAAA=\n\n— w1.example/anchors sig1\n`;
  const cur = `w1.example/anchors\n2\nBBB=\n\n— w1.example/anchors sig2\n`;
  const state: ReportState = {
    witnesses: {
      [witness]: { public_key: 'cd'.repeat(32), log_origin: 'w1.example/anchors', checkpoint: prev },
      'w2.example': { public_key: 'ef'.repeat(32), log_origin: 'w2.example/anchors' },
    },
    seeds: {
      [seed]: {
        observations: [
          { witness, anchor: { index: 1, head: '11'.repeat(32) }, seen: 1000 },
          { witness: 'w2.example', anchor: { index: 1, head: '22'.repeat(32) }, seen: 1010 },
        ],
      },
    },
  };
  const anchor = (head: string, cumulative: bigint): AnchorWire => ({
    seed_id: seed,
    index: 1,
    head,
    cumulative,
    timestamp: `<img src=x onerror=alert(1)>`,
    witness_set: { said: EVIL, threshold: 1 },
    sig_party: { curve: 'ed25519', public_key: 'cd'.repeat(32), signature: 'ef'.repeat(64) },
  });
  const cosignature = { witness_name: witness, witness_public_key: 'cd'.repeat(32), signature: EVIL, timestamp: EVIL };
  const proof = {
    seed_id: seed,
    index: 1,
    anchor_a: anchor('11'.repeat(32), 12345678901234567890123n),
    anchor_b: anchor('22'.repeat(32), 5n),
  };
  const polls: ReportPoll[] = [
    {
      time: 1000,
      findings: [],
      witnesses: [
        { url: 'http://w1', name: witness, reachable: true, logSize: 3, anchors: { [seed]: 1 } },
        { url: 'http://w2', name: 'w2.example', reachable: true, logSize: 1, anchors: { [seed]: null } },
      ],
    },
    {
      time: 1060,
      findings: [
        {
          id: 'd',
          kind: 'disagreement',
          severity: 'alert',
          seed,
          witness: `${witness},w2.example`,
          message: `disagree ${EVIL}`,
          evidence: {
            index: 1,
            a: { witness, anchor: proof.anchor_a, cosignature },
            b: { witness: 'w2.example', anchor: proof.anchor_b, cosignature },
            duplicity_proof: proof,
          },
        },
        { id: 'r', kind: 'log_rollback', severity: 'alert', witness, message: 'rolled back', evidence: { previous: prev, current: cur } },
        { id: 'u', kind: 'unreachable', severity: 'warning', message: `http://w3 <b>down</b>` },
      ],
      witnesses: [
        { url: 'http://w1', name: witness, reachable: true, logSize: 2, anchors: { [seed]: 1 } },
        { url: 'http://w2', name: 'w2.example', reachable: true, logSize: 1, anchors: { [seed]: 1 } },
      ],
    },
  ];
  const page = renderMonitorReport({ state, polls, generatedAt: 1100 });
  assertInert(page);
  assert.equal(styleOf(page), STYLESHEET);
  assert.ok(page.includes(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">`));
  assert.equal((page.match(/<article class="finding alert"/g) ?? []).length, 2);
  assert.equal((page.match(/<article class="finding warning"/g) ?? []).length, 1);
  assert.equal((page.match(/<svg class="chart"/g) ?? []).length, 2, 'one seed chart and the log chart');
  const links = [...page.matchAll(/<a download="([^"]+)" href="data:([a-z/]+);charset=utf-8;base64,([A-Za-z0-9+/=]+)">/g)].map((m) => ({
    name: m[1]!,
    mime: m[2]!,
    body: Buffer.from(m[3]!, 'base64').toString('utf8'),
  }));
  const byName = (suffix: string) => links.find((l) => l.name.endsWith(suffix));
  assert.equal(byName('-previous.txt')?.body, prev, 'the signed checkpoint downloads byte for byte');
  assert.equal(byName('-current.txt')?.body, cur);
  const proofFile = byName('-duplicity_proof.json');
  assert.equal(proofFile?.mime, 'application/json');
  assert.ok(proofFile.body.includes('"cumulative": 12345678901234567890123'), 'big integers stay exact');
  assert.ok(page.includes(`anchor-witness verify duplicity ${proofFile.name}`));
  assert.ok(
    page.includes(
      `anchor-witness verify checkpoint ${byName('-previous.txt')!.name} --witness-key ${'cd'.repeat(32)} --origin w1.example/anchors`,
    ),
  );
  assert.ok(page.includes('disagree &lt;script&gt;'));
  // a data: URL helper refuses a bogus media type (it is put in an attribute)
  assert.throws(() => dataUrl('text/html"><script>', 'x'));
});

void test('monitor report: no polls, no findings', () => {
  const page = renderMonitorReport({ state: { witnesses: {}, seeds: {} }, polls: [], generatedAt: 0 });
  assertInert(page);
  assert.ok(page.includes('id="no-findings"'));
  assert.ok(page.includes('No seed watched'));
});

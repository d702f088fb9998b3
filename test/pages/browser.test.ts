// The witness and bridge status pages and the monitor's HTML report, in a real headless Chromium
// (playwright-core + Debian's chromium): each renders from a running server, shows live values
// (log size and anchors after a submission, a cosigned log's size, tokens issued), loads nothing
// from anywhere (every request is checked), logs no console error, runs no script (hostile
// `<script>` values from the witness name, a logs/v0 list entry, an audience appear as text), and
// is saved as a screenshot under test-artifacts/pages/. Without /usr/bin/chromium the tests report
// themselves skipped (CI=true: they fail instead).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { encodeAnchor, decodeDuplicityProof } from '../../src/anchor/codec.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import type { Anchor, DuplicityProofWire } from '../../src/anchor/types.ts';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../../src/bridge/client.ts';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
import { renderMonitorReport } from '../../src/client/monitor-report.ts';
import { emptyMonitorState, monitorPoll, type PollReport } from '../../src/client/monitor.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, generateEd25519 } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { PAGE_CSP } from '../../src/pages/layout.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { SyntheticLog } from '../helpers/cosign-harness.ts';
import {
  ARTIFACTS,
  chromiumStatus,
  launchBrowser,
  screenshot,
  watchedPage,
  type Browser,
  type WatchedPage,
} from '../helpers/pages-browser.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness } from '../helpers/witness.ts';

const status = chromiumStatus();
const skip = status.kind === 'ok' ? false : status.message;
if (status.kind === 'skip') process.stderr.write(`# ${status.message}\n`);

if (status.kind === 'fail') {
  void test('Chromium is installed for the browser tests', () => {
    assert.fail(status.message);
  });
}

const HOSTILE_NAME = 'pages.test/<script>alert(1)</script>';
const HOSTILE_ORIGIN = 'hostile.example/<script>alert("list")</script> & <b>co</b>';
const HOSTILE_AUDIENCE = 'aud.example/<script>alert(2)</script>';

const alice = edParty(0x09);
const registry = {
  parties: [{ id: 'did:keri:EAlice', delegator: 'did:keri:ERoot', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }],
};
const ALICE = { agent: 'did:keri:EAlice', root: 'did:keri:ERoot' };
const seedOf = (scope: string) => deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', scope);
const anchorAt = (scope: string, index: number, head: number): Anchor =>
  signAnchor(alice, { seedId: seedOf(scope), index, head: fill(head), cumulative: BigInt(index) * 10n, timestamp: 1_700_000_000 + index });
async function submit(w: RunningWitness, a: Anchor, scope: string): Promise<void> {
  const r = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { ...ALICE, scope } });
  assert.equal(r.status, 200, r.text);
}

let browser: Browser | undefined;
let tmp: ReturnType<typeof tempDir>;
before(() => {
  tmp = tempDir('aw-pages-');
  if (status.kind === 'ok') browser = launchBrowser();
});
after(async () => {
  await browser?.close();
  tmp.cleanup();
});

const text = async (w: WatchedPage, selector: string): Promise<string> =>
  ((await w.page.locator(selector).first().textContent()) ?? '').trim();

/** What every page must show: no script ran or exists, nothing foreign loaded, no console error, styles applied (the CSP hash matches). */
async function assertClean(w: WatchedPage, only: (url: string) => boolean): Promise<void> {
  assert.deepEqual(w.errors, [], 'console errors');
  assert.deepEqual(w.dialogs, [], 'a dialog opened: a script ran');
  assert.deepEqual(w.foreign, [], 'requests to other origins');
  for (const r of w.requests) assert.ok(only(r), `unexpected request ${r}`);
  assert.equal(await w.page.locator('script').count(), 0, 'no <script> element');
  const radius: unknown = await w.page.evaluate("getComputedStyle(document.querySelector('.card')).borderTopLeftRadius");
  assert.equal(radius, '8px', 'the stylesheet applies (its CSP hash matches)');
}

void test(
  'witness status page: live values, hostile name and log origin escaped, no script, nothing external',
  { skip, timeout: 30_000 },
  async () => {
    const dir = join(tmp.dir, 'witness');
    const cosignKey = join(tmp.dir, 'cosign.pem');
    writeNewKeyFile(cosignKey, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x31))));
    const log = new SyntheticLog('example.com/log', ed25519KeyFromSeed(fill(0x40)));
    const hostileLog = new SyntheticLog('hostile.example', generateEd25519().privateKey);
    mkdirSync(dir, { recursive: true });
    const logsFile = join(dir, 'logs.json');
    writeFileSync(logsFile, JSON.stringify({ logs: [{ origin: log.origin, keys: [log.vkey], qpd: 86400 }] }));
    const listFile = join(dir, 'witness-network.list');
    writeFileSync(listFile, `logs/v0\nvkey ${hostileLog.vkey}\norigin ${HOSTILE_ORIGIN}\nqpd 24\n`);
    const w = await startTestWitness(dir, registry, {
      name: HOSTILE_NAME,
      roles: ['anchor', 'cosign'],
      cosignKeyFiles: [cosignKey],
      logsFile,
      logsLists: [listFile],
    });
    try {
      const ctx = await browser!.context();
      const origin = new URL(w.url).origin;
      const p = await watchedPage(ctx, origin);
      const res = await p.page.goto(`${w.url}/`);
      assert.equal(res?.status(), 200);
      assert.equal(res.headers()['content-security-policy'], PAGE_CSP);
      assert.equal(await text(p, 'h1'), HOSTILE_NAME);
      assert.equal(await p.page.title(), `${HOSTILE_NAME} — anchor witness`);
      assert.equal(await text(p, '#log-size .value'), '0');
      assert.equal(await text(p, '#anchors .value'), '0');
      assert.equal(await text(p, '#duplicities .value'), '0');
      const idText = await text(p, '#identity');
      assert.match(idText, /did:key:z6Mk/);
      assert.ok(idText.includes(`${HOSTILE_NAME}/anchors+`), 'log vkey shown');
      const cosignRows = p.page.locator('#cosign-logs tbody tr');
      assert.equal(await cosignRows.count(), 2);
      assert.ok((await text(p, '#cosign-logs')).includes(HOSTILE_ORIGIN), 'the hostile list origin appears as text');
      assert.match(await text(p, '#cmd-witness-set'), new RegExp(`--witness ${origin.replace(/\./g, '\\.')} `));

      // live: one anchor co-signed, one checkpoint of example.com/log cosigned
      await submit(w, anchorAt('PAGES', 1, 0x11), 'PAGES');
      const cp = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: formatAddCheckpointRequest(0, [], log.checkpoint(5)) });
      assert.equal(cp.status, 200, await cp.text());
      await p.page.reload();
      assert.equal(await text(p, '#log-size .value'), '1');
      assert.equal(await text(p, '#anchors .value'), '1');
      assert.match(await text(p, '#log-size .note'), /^signed \d+ s ago \(/, 'the checkpoint this process signed has an exact age');
      const cells = await p.page.locator('#cosign-logs tbody tr', { hasText: 'example.com/log' }).first().locator('td').allTextContents();
      assert.equal(cells[1], '5', 'size cosigned');
      assert.match(cells[2]!, /^\d+ s ago /);
      assert.match(cells[3]!, /^86\u202f400\/day \(burst 3\u202f600\)since start: 1 counted, 0 refused \(429\)$/);
      assert.match(await text(p, '#checkpoint'), new RegExp(`^${HOSTILE_NAME.replace(/[()[\]]/g, '\\$&')}/anchors\\s+1\\s`));
      await screenshot(p.page, 'witness');
      await assertClean(p, (u) => u === `${w.url}/`);

      // the page needs no JavaScript
      const noJs = await browser!.context({ javaScriptEnabled: false });
      const q = await watchedPage(noJs, origin);
      await q.page.goto(`${w.url}/`);
      assert.equal(await text(q, '#log-size .value'), '1');
      assert.equal(await text(q, 'h1'), HOSTILE_NAME);
      assert.deepEqual([q.errors, q.foreign], [[], []]);

      // Accept: application/json still gets the /health body
      const json = (await (await fetch(`${w.url}/`, { headers: { accept: 'application/json' } })).json()) as {
        status: string;
        log: { size: number };
      };
      assert.deepEqual([json.status, json.log.size], ['ok', 1]);
    } finally {
      await browser!.closeContexts();
      await w.close();
    }
  },
);

void test(
  'bridge status page: issuer, keys, policy, aws-setup; tokens issued grows; hostile audience escaped',
  { skip, timeout: 30_000 },
  async () => {
    const keyDir = join(tmp.dir, 'bridge-keys');
    let b: RunningBridge | undefined;
    try {
      b = await startBridge(
        {
          host: '127.0.0.1',
          port: 0,
          dev: true,
          keyDir,
          audiences: ['sts.amazonaws.com', HOSTILE_AUDIENCE],
          alg: 'ES256',
          rateLimit: null,
        },
        pino({ level: 'silent' }),
      );
      const ctx = await browser!.context();
      const origin = new URL(b.url).origin;
      const p = await watchedPage(ctx, origin);
      const res = await p.page.goto(`${b.url}/`);
      assert.equal(res?.status(), 200);
      assert.equal(res.headers()['content-security-policy'], PAGE_CSP);
      assert.equal(await text(p, '#tokens-issued .value'), '0');
      assert.equal(await text(p, '#pop .value'), 'required');
      assert.ok((await text(p, '#policy')).includes(HOSTILE_AUDIENCE), 'the hostile audience appears as text');
      const keys = await text(p, '#keys');
      assert.ok(keys.includes(b.keyring.active.kid) && /ES256/.test(keys) && /active/.test(keys) && /signing since/.test(keys));
      const oidc = await text(p, '#oidc');
      assert.ok(
        oidc.includes(`${b.issuer.issuer}/.well-known/openid-configuration`) && oidc.includes(`${b.issuer.issuer}/.well-known/jwks.json`),
      );
      assert.equal(
        await text(p, '#cmd-aws-setup'),
        `token-bridge aws-setup --issuer ${b.issuer.issuer} --subject "$ROOT_DID" --audience sts.amazonaws.com --connect --format cli`,
      );

      // live: exchange a chain for a token, the count grows
      const root = generateEd25519().privateKey;
      const device = generateEd25519().privateKey;
      const chain = buildDidKeyChain(root, [
        { deviceKey: device, capabilities: ['deploy:staging'], expiresAt: Math.floor(Date.now() / 1000) + 3600 },
      ]);
      const body = buildTokenRequest({
        chain,
        rootPublicKey: hexKey(root),
        audience: 'sts.amazonaws.com',
        issuer: b.issuer.issuer,
        deviceKey: device,
      });
      const tok = await post(`${b.url}/token`, body);
      assert.equal(tok.status, 200, tok.text);
      await p.page.reload();
      assert.equal(await text(p, '#tokens-issued .value'), '1');
      await screenshot(p.page, 'bridge');
      await assertClean(p, (u) => u === `${b!.url}/`);
    } finally {
      await browser!.closeContexts();
      await b?.close();
    }
  },
);

void test(
  'monitor report: charts per seed, findings with downloadable evidence that verifies, self-contained',
  { skip, timeout: 30_000 },
  async () => {
    const w2Key = join(tmp.dir, 'w2.pem');
    writeNewKeyFile(w2Key, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x02))));
    mkdirSync(join(tmp.dir, 'm1'));
    mkdirSync(join(tmp.dir, 'm2'));
    const w1 = await startTestWitness(join(tmp.dir, 'm1'), registry, { name: HOSTILE_NAME });
    const w2 = await startTestWitness(join(tmp.dir, 'm2'), registry, { name: 'w2.pages.test', keyFile: w2Key });
    try {
      const scope = 'MON';
      const seed = encodeHex(seedOf(scope));
      const config = { witnesses: [w1.url, w2.url], seeds: [seed], withholdingGraceSec: 0, registry: parseRegistry(registry) };
      const state = emptyMonitorState();
      const polls: PollReport[] = [];
      const t0 = Math.floor(Date.now() / 1000) - 120;
      await submit(w1, anchorAt(scope, 1, 0x21), scope);
      polls.push(await monitorPoll(config, state, t0));
      await submit(w1, anchorAt(scope, 2, 0x22), scope);
      await submit(w2, anchorAt(scope, 1, 0x99), scope); // another head at index 1: the witnesses disagree
      polls.push(await monitorPoll(config, state, t0 + 40));
      await submit(w1, anchorAt(scope, 3, 0x23), scope);
      polls.push(await monitorPoll(config, state, t0 + 80));
      const kinds = new Set(polls.flatMap((p) => p.findings.map((f) => f.kind)));
      assert.ok(kinds.has('withholding') && kinds.has('disagreement'), [...kinds].join());

      const page = renderMonitorReport({ state, polls, generatedAt: t0 + 90 });
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, 'monitor-report.html');
      writeFileSync(file, page);
      const url = pathToFileURL(file).href;

      const ctx = await browser!.context();
      const p = await watchedPage(ctx, url);
      await p.page.goto(url);
      assert.equal(await text(p, 'h1'), 'anchor-witness monitor report');
      const seedChart = p.page.locator(`[id="seed-${seed}"] svg.chart`);
      assert.equal(await seedChart.count(), 1);
      assert.equal(await seedChart.locator('g.series').count(), 2, 'one line per witness');
      assert.ok((await seedChart.locator('g.marker').count()) >= 2, 'findings marked on the chart');
      assert.equal(await p.page.locator('svg.chart').count(), 2, 'seed chart and log chart');
      assert.ok((await p.page.locator('.finding.alert[data-kind="disagreement"]').count()) >= 1);
      assert.ok((await p.page.locator('.finding.alert[data-kind="withholding"]').count()) >= 1);
      assert.ok((await text(p, '#witness-table')).includes(HOSTILE_NAME), 'the hostile witness name appears as text');
      const legend = await seedChart.locator('text').allTextContents();
      assert.ok(
        legend.some((t) => t.includes('pages.test/<script>')),
        'the chart legend shows the name as text',
      );

      // the duplicity proof downloads and verifies offline
      const link = p.page.locator('.finding[data-kind="disagreement"] a', { hasText: 'duplicity proof' }).first();
      const [download] = await Promise.all([p.page.waitForEvent('download'), link.click()]);
      const saved = join(tmp.dir, 'proof.json');
      await download.saveAs(saved);
      const proof = decodeDuplicityProof(JSON.parse(readFileSync(saved, 'utf8')) as DuplicityProofWire);
      assert.equal(verifyDuplicityProof(proof).valid, true);
      assert.equal(proof.index, 1);

      await screenshot(p.page, 'monitor-report');
      await assertClean(p, (u) => u === url || u.startsWith('data:'));
    } finally {
      await browser!.closeContexts();
      await w1.close();
      await w2.close();
    }
  },
);

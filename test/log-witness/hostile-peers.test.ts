// SPEC §4.1 against fake peer witnesses on loopback, one behaviour per URL prefix of one server:
// a 409 with a size this log never had, and a second 409 in a row, are peer_state_conflict (counted,
// never followed); a 409 with a size the log had is adopted once (proof from it); 429 honours
// Retry-After; one request in flight per URL; redirects are not followed; oversized replies, a
// matching line that fails and replies without a matching line collect nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { parseAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { SIG_TYPE_COSIGNATURE_V1, parseNote, verifyNote } from '../../src/note/signed-note.ts';
import { formatVkey, parseVkey } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get } from '../helpers/witness.ts';
import { anchorAt, makePeer, metricValue, startPeer, type Peer } from '../helpers/log-witness-peers.ts';
import { until } from '../helpers/poll.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const FAKE = 'fake.test';
const MODES = ['never-had', 'twice', 'adopt', 'slow', 'ratelimit', 'huge', 'redirect', 'badline', 'otherkey'] as const;
type Mode = (typeof MODES)[number];
// One cosigner key per fake witness (a key listed under two witnesses is refused at load).
const keyOf = (m: Mode) => ed25519KeyFromSeed(fill(0x60 + MODES.indexOf(m)));
const vkeyOf = (m: Mode) => formatVkey(FAKE, SIG_TYPE_COSIGNATURE_V1, ed25519PublicKeyBytes(keyOf(m)));
const otherKey = ed25519KeyFromSeed(fill(0x78));

interface Seen {
  old: number;
  size: number;
  proof: number;
  at: number;
}
const seen = new Map<string, Seen[]>();
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
let redirectTargetHit = 0;

const line = (key: ReturnType<typeof keyOf>, text: string): string =>
  ed25519Cosigner(FAKE, key)
    .noteSigner(Math.floor(Date.now() / 1000))
    .line(text);

async function answer(mode: Mode, body: string, res: http.ServerResponse): Promise<void> {
  const req = parseAddCheckpointRequest(body);
  const text = req.note.text;
  const fakeKey = keyOf(mode);
  const size409 = (n: number) => res.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end(`${n}\n`);
  const ok = (b: string) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(b);
  switch (mode) {
    case 'never-had':
      return void size409(1_000_000);
    case 'twice':
      return void size409(1);
    case 'adopt':
      return req.oldSize === 2 ? void ok(line(fakeKey, text)) : void size409(2);
    case 'slow':
      await new Promise((r) => setTimeout(r, 300));
      return void ok(line(fakeKey, text));
    case 'ratelimit': {
      const n = seen.get(mode)!.length;
      return n === 1 ? void res.writeHead(429, { 'retry-after': '2' }).end('slow down\n') : void ok(line(fakeKey, text));
    }
    case 'huge':
      return void ok(line(fakeKey, text) + `— ${FAKE} ${'A'.repeat(70_000)}\n`);
    case 'redirect':
      return void res.writeHead(307, { location: '/target/add-checkpoint' }).end();
    case 'badline': {
      const l = line(fakeKey, text);
      return void ok(l.replace(/[A-Za-z](=*\n)$/, (m) => (m.startsWith('A') ? 'B' : 'A') + m.slice(1)));
    }
    case 'otherkey':
      return void ok(line(otherKey, text));
  }
}

let server: http.Server;
let fakeUrl: string;
let tmp: ReturnType<typeof tempDir>;
let D: Peer;

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const mode = (req.url ?? '').split('/')[1] as Mode;
      if (mode === ('target' as Mode)) {
        redirectTargetHit++;
        return void res.writeHead(500).end();
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const r = parseAddCheckpointRequest(body);
      const list = seen.get(mode) ?? [];
      list.push({ old: r.oldSize, size: parseCheckpoint(r.note.text).size, proof: r.proof.length, at: Date.now() });
      seen.set(mode, list);
      inFlight.set(mode, (inFlight.get(mode) ?? 0) + 1);
      maxInFlight.set(mode, Math.max(maxInFlight.get(mode) ?? 0, inFlight.get(mode)!));
      res.on('close', () => inFlight.set(mode, inFlight.get(mode)! - 1));
      void answer(mode, body, res);
    });
  });
  fakeUrl = `http://127.0.0.1:${await listenLoopback(server)}`;
  tmp = tempDir('aw-logwit-fake-');
  D = await makePeer(4, tmp.dir);
  // First without witnesses: the log grows to 3 (so size 2 is one it had); then with the fakes.
  await startPeer(D, []);
  assert.equal(await anchorAt(D, 3), 3);
  await D.node!.close();
  const doc = { quorum: 1, witnesses: MODES.map((m) => ({ url: `${fakeUrl}/${m}/`, vkeys: [vkeyOf(m)] })) };
  writeFileSync(join(D.dir, 'witnesses.json'), JSON.stringify(doc));
  await startPeer(D, [], { logWitnessesFile: join(D.dir, 'witnesses.json'), logWitnessIntervalMs: 50 });
});
after(async () => {
  await D.node?.close();
  await closeServer(server);
  tmp.cleanup();
});

const count = async (mode: Mode, outcome: string): Promise<number> =>
  metricValue((await get(`${D.url}/metrics`)).text, 'log_witness_requests_total', { witness: `${fakeUrl}/${mode}/`, outcome });

void test('409 with a size the log had is adopted once: the retry proves consistency from it, and the lines are published', async () => {
  const served = await until('a published checkpoint of size 3', async () => {
    const r = await get(`${D.url}/log/checkpoint`);
    return parseCheckpoint(parseNote(r.text).text).size === 3 ? r.text : undefined;
  });
  const v = verifyNote(served, [parseVkey(D.logVkey), ...MODES.map((m) => parseVkey(vkeyOf(m)))]);
  assert.ok(v.verified.some((x) => x.verifier.vkey === vkeyOf('adopt')));
  const adopt = seen.get('adopt')!;
  assert.deepEqual(
    adopt.slice(0, 2).map((s) => [s.old, s.size, s.proof > 0]),
    [
      [0, 3, false],
      [2, 3, true],
    ],
  );
  assert.ok((await count('adopt', 'conflict')) >= 1);
  assert.ok((await count('adopt', 'cosigned')) >= 1);
});

void test('a 409 with a size this log never had, and a second 409 in a row, are peer_state_conflict: counted, never followed, retried next round', async () => {
  await until('conflicts counted', async () =>
    (await count('never-had', 'peer_state_conflict')) >= 2 && (await count('twice', 'peer_state_conflict')) >= 2 ? true : undefined,
  );
  // Never followed: every request to never-had still says old 0; twice alternates 0 and the adopted 1.
  assert.ok(seen.get('never-had')!.every((s) => s.old === 0));
  assert.deepEqual(
    seen
      .get('twice')!
      .slice(0, 4)
      .map((s) => s.old),
    [0, 1, 0, 1],
  );
  const h = (await get(`${D.url}/health`)).body as { log_witnesses: { url: string; cosigned_size: number; lag_entries: number }[] };
  for (const m of ['never-had', 'twice'] as const) {
    const w = h.log_witnesses.find((x) => x.url === `${fakeUrl}/${m}/`)!;
    assert.deepEqual([w.cosigned_size, w.lag_entries], [0, 3]);
  }
});

void test('one request in flight per witness URL, while rounds keep coming', async () => {
  await anchorAt(D, 2);
  await until('the slow witness to get two checkpoints', () => Promise.resolve((seen.get('slow')?.length ?? 0) >= 2 ? true : undefined));
  assert.equal(maxInFlight.get('slow'), 1);
  for (const m of MODES) assert.ok((maxInFlight.get(m) ?? 0) <= 1, m);
});

void test('429 honours Retry-After', async () => {
  const s = await until('the rate-limited witness to be asked again', () => {
    const list = seen.get('ratelimit') ?? [];
    return Promise.resolve(list.length >= 2 ? list : undefined);
  });
  assert.ok(s[1]!.at - s[0]!.at >= 1900, `asked again after ${s[1]!.at - s[0]!.at} ms`);
  assert.equal(await count('ratelimit', 'rate_limited'), 1);
});

void test('hostile replies collect nothing: redirect not followed, oversized body, a failing matching line, no matching line', async () => {
  await until('hostile replies counted', async () => ((await count('otherkey', 'invalid_response')) >= 1 ? true : undefined));
  assert.ok((await count('redirect', 'rejected')) >= 1);
  assert.equal(redirectTargetHit, 0);
  assert.ok((await count('huge', 'invalid_response')) >= 1);
  assert.ok((await count('badline', 'invalid_response')) >= 1);
  // Backoff: a failing witness is not asked every 50 ms round.
  const n = seen.get('badline')!.length;
  assert.ok(n <= 4, `badline asked ${n} times`);
  const h = (await get(`${D.url}/health`)).body as { log_witnesses: { url: string; cosigned_size: number }[] };
  for (const m of ['redirect', 'huge', 'badline', 'otherkey'] as const)
    assert.equal(h.log_witnesses.find((x) => x.url === `${fakeUrl}/${m}/`)!.cosigned_size, 0, m);
  const cs = (await D.node!.store.logWitness.cosigned(D.node!.logWitnessing!.published!))!;
  assert.equal(cs.lines.has(`${fakeUrl}/adopt/`), true);
  for (const m of ['redirect', 'huge', 'badline', 'otherkey', 'never-had', 'twice'])
    assert.equal(cs.lines.has(`${fakeUrl}/${m}/`), false, m);
});

void test('the witnesses file is reloaded on rename-into-place; a bad one keeps the previous copy', async () => {
  const file = join(D.dir, 'witnesses.json');
  const urls = async () => ((await get(`${D.url}/health`)).body as { log_witnesses: { url: string }[] }).log_witnesses.map((w) => w.url);
  writeFileSync(`${file}.new`, JSON.stringify({ quorum: 2, witnesses: [{ url: `${fakeUrl}/adopt/`, vkeys: [vkeyOf('adopt')] }] }));
  renameSync(`${file}.new`, file);
  const failed = async () => metricValue((await get(`${D.url}/metrics`)).text, 'log_witnesses_reloads_total', { result: 'failed' });
  await until('the failed reload', async () => ((await failed()) === 1 ? true : undefined), 10_000);
  assert.equal((await urls()).length, MODES.length, 'quorum 2 of 1 witness is refused: the previous copy stays');
  writeFileSync(`${file}.new`, JSON.stringify({ quorum: 1, witnesses: [{ url: `${fakeUrl}/adopt/`, vkeys: [vkeyOf('adopt')] }] }));
  renameSync(`${file}.new`, file);
  await until('the reload', async () => ((await urls()).length === 1 ? true : undefined), 10_000);
  assert.deepEqual(await urls(), [`${fakeUrl}/adopt/`]);
  const metrics = (await get(`${D.url}/metrics`)).text;
  assert.equal(metricValue(metrics, 'log_witnesses_reloads_total', { result: 'failed' }), 1);
  assert.equal(metricValue(metrics, 'log_witnesses_reloads_total', { result: 'ok' }), 1);
});

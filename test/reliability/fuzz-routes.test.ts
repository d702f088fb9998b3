// Hostile input, HTTP layer: property-based fuzzing (fast-check) of every route of a running
// witness (anchor + cosign roles) and token bridge, over real loopback HTTP. After every request:
// no 5xx, every refusal a problem+json with a documented code (the C2SP route: one text line with
// a SPEC §5 status), and the durable state (checkpoint, seeds, per-origin cosign state; the bridge's
// nonce store) unchanged unless the answer is one that SPEC says writes (200 co-sign, the first 409
// duplicity proof of a seed, 200 add-checkpoint, 200 token). Then the log is audited from its tiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { decodeAnchor, encodeAnchor } from '../../src/anchor/codec.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import type { Anchor, AnchorWire } from '../../src/anchor/types.ts';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../../src/bridge/client.ts';
import { startBridge } from '../../src/bridge/node.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { ed25519KeyFromSeed, verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { edParty, fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { SyntheticLog } from '../helpers/cosign-harness.ts';
import { checkAnchors, WitnessAudit, type AckedAnchor } from '../helpers/rel-audit.ts';
import {
  COSIGN_STATUSES,
  codeOf,
  documentedCodes,
  figures,
  httpRequest,
  PROFILE,
  rawRequest,
  refusalDefect,
  toJson,
  type Answer,
} from '../helpers/rel-common.ts';
import { applyStruct, applyText, structOp, textOp } from '../helpers/rel-fuzz.ts';
import { AGENT, makeDeployment, ORIGIN, startTestNode, witnessPublicKey } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';
import { holdHeavyLock } from '../helpers/heavy-lock.ts';

// One load-generating suite at a time (see heavy-lock.ts).
await holdHeavyLock();

const SEED = Number(process.env.REL_SEED ?? 0x5eed) + 1000;
const CODES = documentedCodes();
const runs = (n: number) => Math.max(1, Math.round(n * PROFILE.fuzz));
const DEBUG = process.env.REL_DEBUG === '1';

class Tally {
  readonly statuses = new Map<string, number>();
  requests = 0;
  stateChanges = 0;
  add(route: string, a: { status: number; text: string; headers: Answer['headers'] }): void {
    this.requests++;
    const k = `${route} ${a.status}${a.status >= 400 ? ` ${codeOf(a)}` : ''}`;
    this.statuses.set(k, (this.statuses.get(k) ?? 0) + 1);
  }
  top(): Record<string, number> {
    return Object.fromEntries([...this.statuses].sort((a, b) => b[1] - a[1]));
  }
}

void test(
  'witness routes: no 5xx, documented codes only, no state change from a refusal; log audited after',
  { timeout: 600_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-fuzz-');
    const d = makeDeployment(dir);
    const k2 = edParty(0x74); // a second current key of AGENT
    const stranger = edParty(0x75); // a key nobody registered
    const other = edParty(0x76); // another party
    const limited = edParty(0x77); // a party with a tiny quota
    const ed = (p: TestParty) => [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }];
    writeFileSync(
      d.registryFile,
      JSON.stringify({
        parties: [
          { id: AGENT, keys: [...ed(d.party), ...ed(k2)], delegator: 'did:keri:ERelRoot' },
          { id: 'did:keri:ERelOther', keys: ed(other) },
          { id: 'did:keri:ERelLimited', keys: ed(limited), limits: { anchors_per_minute: 2, new_seeds_per_day: 1 } },
        ],
      }),
    );
    const w = await startTestNode(d);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const tally = new Tally();
      const audit = new WitnessAudit(ORIGIN, witnessPublicKey(d));
      const acked: AckedAnchor[] = [];
      const frozen = new Set<string>();
      const cosigned = new Map<string, number>(d.logs.map((l) => [l.origin, 0]));
      const snapshot = async (): Promise<string> => {
        const cp = await w.store.log.checkpoint();
        const counts = await w.store.anchors.counts();
        const origins = await Promise.all(
          d.logs.map(async (l) => {
            const o = await w.store.cosign.getOrigin(l.origin);
            return o === undefined ? null : [o.size, encodeHex(o.root), o.cosignatures, o.lastTime];
          }),
        );
        return JSON.stringify({ cp: cp?.note, counts, origins });
      };
      let state = await snapshot();
      /** Send, check the answer, compare state; `mayWrite` says whether this answer may change state. */
      async function exchange(
        route: string,
        method: string,
        path: string,
        body: string | Buffer | undefined,
        headers: Record<string, string>,
        mayWrite: (a: Answer) => boolean,
      ): Promise<Answer> {
        if (DEBUG) process.stderr.write(`> ${method} ${path.slice(0, 60)} ${String(body).slice(0, 60)}\n`);
        const a = await httpRequest(w.url + path, { method, headers, ...(body === undefined ? {} : { body }), agent, timeoutMs: 15_000 });
        if (DEBUG) process.stderr.write(`< ${a.status} ${a.text.slice(0, 100)}\n`);
        tally.add(route, a);
        const failures: string[] = [];
        if (method === 'HEAD') {
          if (a.status >= 500) failures.push(`HEAD ${path.slice(0, 80)}: ${a.status}`);
        } else if (route === 'cosign' && !String(a.headers['content-type']).startsWith('application/problem+json')) {
          // C2SP routes answer one line of text/plain (409: the size as text/x.tlog.size)
          if (!COSIGN_STATUSES.has(a.status) || (a.status >= 500 && a.headers['retry-after'] === undefined))
            failures.push(`${method} ${path.slice(0, 80)}: status ${a.status}: ${a.text.slice(0, 200)}`);
          else if (a.status !== 200 && !/^[^\n]*\n$/.test(a.text))
            failures.push(`${method} ${path.slice(0, 80)}: ${a.status} body is not one line: ${JSON.stringify(a.text.slice(0, 200))}`);
        } else {
          const defect = refusalDefect(a, CODES);
          if (defect !== undefined) failures.push(`${method} ${path.slice(0, 80)}: ${defect}`);
        }
        const now = await snapshot();
        if (now !== state) {
          tally.stateChanges++;
          if (!mayWrite(a)) failures.push(`${method} ${path.slice(0, 80)} answered ${a.status} ${codeOf(a)} but changed the stored state`);
        }
        state = now;
        assert.deepEqual(failures, [], failures.join('\n'));
        return a;
      }

      // ---- POST /v1/anchor ---------------------------------------------------------------------------
      interface LaneState {
        scope: string;
        seedId: Uint8Array;
        latest: Anchor | undefined;
      }
      const lanes: LaneState[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((s) => ({
        scope: `fuzz-${s}`,
        seedId: deriveSeedId(AGENT, AGENT, `fuzz-${s}`),
        latest: undefined,
      }));
      const headOf = (lane: LaneState, index: number, alt: boolean) =>
        Buffer.from(sha256Hex(`${lane.scope}/${index}/${alt ? 'alt' : ''}`), 'hex');
      const onAnchorAnswer = (a: Answer, anchor: Anchor | undefined): boolean => {
        if (a.status === 200) {
          const b = JSON.parse(a.text) as {
            anchor: AnchorWire;
            replay: boolean;
            cosignature: { signature: string };
            inclusion: { leaf_index: number; checkpoint: string };
          };
          const stored = decodeAnchor({ ...b.anchor, cumulative: String(b.anchor.cumulative) });
          assert.ok(
            verifyEd25519(witnessPublicKey(d), cosignMessage(stored), Buffer.from(b.cosignature.signature, 'hex')),
            'cosignature does not verify',
          );
          audit.record(b.inclusion.checkpoint);
          const lane = lanes.find((l) => Buffer.compare(l.seedId, stored.seedId) === 0);
          if (!b.replay) {
            acked.push({ anchor: stored, leafIndex: b.inclusion.leaf_index });
            if (lane !== undefined) lane.latest = stored;
          }
          return !b.replay;
        }
        if (a.status === 409 && anchor !== undefined) {
          const key = encodeHex(anchor.seedId);
          const isNew = !frozen.has(key);
          frozen.add(key);
          return isNew;
        }
        return false;
      };
      const anchorBody = (anchor: Anchor, claim: Record<string, string>) => toJson({ anchor: encodeAnchor(anchor), party: claim });
      const validFor = (lane: LaneState): { anchor: Anchor; claim: Record<string, string> } => {
        const index = (lane.latest?.index ?? 0) + 1;
        const anchor = signAnchor(d.party, {
          seedId: lane.seedId,
          index,
          head: headOf(lane, index, false),
          cumulative: BigInt(index) * 10n,
          timestamp: 1_700_000_000 + index,
          witnessSet: { said: 'EFuzzSet', threshold: 1 },
        });
        return { anchor, claim: { agent: AGENT, root: AGENT, scope: lane.scope } };
      };

      // (a) mutations of a valid request: structural and textual
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: 7 }),
          fc.array(structOp, { maxLength: 3 }),
          fc.array(textOp, { maxLength: 2 }),
          fc.constantFrom(
            'application/json',
            'application/json',
            'application/json',
            'application/json; charset=utf-8',
            'application/merge-patch+json',
            'text/plain',
            'application/json; charset=latin1',
            '',
          ),
          async (li, sops, tops, ctype) => {
            const { anchor, claim } = validFor(lanes[li]!);
            const doc = JSON.parse(anchorBody(anchor, claim)) as unknown;
            const text = applyText(JSON.stringify(applyStruct(doc, sops)), tops);
            await exchange('anchor', 'POST', '/v1/anchor', text, ctype === '' ? {} : { 'content-type': ctype }, (a) =>
              onAnchorAnswer(a, anchor),
            );
          },
        ),
        { numRuns: runs(1500), seed: SEED },
      );

      // (b) validly signed, semantically hostile: every check of SPEC §3.3 from 2 to 15
      const semantic = fc.record({
        lane: fc.nat({ max: 7 }),
        indexDelta: fc.constantFrom(-1, 0, 0, 1, 1, 1, 2),
        alt: fc.nat({ max: 7 }).map((x) => x === 0),
        cumDelta: fc.constantFrom(-2, 0, 0, 1, 5),
        tsDelta: fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom(-1, 0, 0, 1, 3) },
          { weight: 1, arbitrary: fc.constantFrom(10 ** 9, 2 * 10 ** 9) },
        ),
        said: fc.constantFrom('EFuzzSet', 'EFuzzSet', 'EOtherSet'),
        signer: fc.constantFrom('main', 'main', 'main', 'main', 'k2', 'k2', 'stranger', 'other'),
        claim: fc.constantFrom(
          'full',
          'full',
          'full',
          'full',
          'agent',
          'wrongScope',
          'delegator',
          'otherRoot',
          'unknown',
          'other',
          'limited',
        ),
        badSig: fc.nat({ max: 5 }).map((x) => x === 0),
      });
      const signers: Record<string, TestParty> = { main: d.party, k2, stranger, other, limited };
      await fc.assert(
        fc.asyncProperty(semantic, async (s) => {
          const lane = lanes[s.lane]!;
          const base = lane.latest;
          const index = Math.max(0, (base?.index ?? 0) + s.indexDelta);
          const cumulative = BigInt(Math.max(0, Number(base?.cumulative ?? 0n) + s.cumDelta));
          const timestamp =
            s.tsDelta >= 10 ** 9
              ? Math.floor(Date.now() / 1000) + (s.tsDelta === 10 ** 9 ? 200 : 400)
              : (base?.timestamp ?? 1_700_000_000) + s.tsDelta;
          // 'limited': its own derived seeds, one new seed a day allowed → party_quota_exceeded
          const seedId =
            s.claim === 'limited' ? deriveSeedId('did:keri:ERelLimited', 'did:keri:ERelLimited', `${lane.scope}-${index}`) : lane.seedId;
          let anchor = signAnchor(s.claim === 'limited' ? limited : signers[s.signer]!, {
            seedId,
            index,
            head: headOf(lane, index, s.alt),
            cumulative,
            timestamp,
            witnessSet: { said: s.said, threshold: 1 },
          });
          if (s.badSig)
            anchor = {
              ...anchor,
              sigParty: { ...anchor.sigParty, signature: Uint8Array.from(anchor.sigParty.signature, (x, i) => (i === 5 ? x ^ 1 : x)) },
            };
          const claims: Record<string, Record<string, string>> = {
            full: { agent: AGENT, root: AGENT, scope: lane.scope },
            agent: { agent: AGENT },
            wrongScope: { agent: AGENT, root: AGENT, scope: `${lane.scope}x` },
            delegator: { agent: AGENT, root: 'did:keri:ERelRoot', scope: lane.scope },
            otherRoot: { agent: AGENT, root: 'did:keri:ENotMyRoot', scope: lane.scope },
            unknown: { agent: 'did:keri:ENobody' },
            other: { agent: 'ERelOther', root: 'ERelOther', scope: lane.scope },
            limited: { agent: 'did:keri:ERelLimited', root: 'did:keri:ERelLimited', scope: `${lane.scope}-${index}` },
          };
          await exchange(
            'anchor',
            'POST',
            '/v1/anchor',
            anchorBody(anchor, claims[s.claim]!),
            { 'content-type': 'application/json' },
            (a) => onAnchorAnswer(a, anchor),
          );
        }),
        { numRuns: runs(1200), seed: SEED + 1 },
      );

      // (c) reads and unknown routes with hostile paths, queries and methods
      const pathChars = fc.string({ unit: fc.constantFrom(..."abcdefx0123456789ABCDEF/%.~_-?&=+;:@!$'()*,".split('')), maxLength: 80 });
      const hex64 = fc.stringMatching(/^[0-9a-fA-F]{64}$/);
      const seedish = fc.oneof(
        hex64,
        pathChars,
        fc.constantFrom(encodeHex(lanes[0]!.seedId), encodeHex(lanes[0]!.seedId).toUpperCase(), '', '%00', '..%2f..%2fetc%2fpasswd'),
      );
      const paths = fc.oneof(
        seedish.map((x) => `/v1/anchor/${x}`),
        seedish.map((x) => `/v1/duplicity/${x}`),
        fc.tuple(seedish, fc.oneof(fc.nat({ max: 200 }).map(String), pathChars)).map(([a, l]) => `/v1/duplicity?after=${a}&limit=${l}`),
        fc
          .tuple(fc.integer({ min: 0, max: 70 }), fc.nat({ max: 5000 }), fc.integer({ min: 0, max: 300 }))
          .map(([l, n, wd]) => `/log/tile/${l}/${String(n).padStart(3, '0')}${wd > 0 && wd < 256 ? `.p/${wd}` : ''}`),
        fc
          .tuple(fc.nat({ max: 3 }), fc.integer({ min: 0, max: 300 }))
          .map(([n, wd]) => `/log/tile/entries/${String(n).padStart(3, '0')}.p/${wd}`),
        pathChars.map((p) => `/log/tile/${p}`),
        fc.oneof(hex64, fc.constant(sha256Hex(d.logs[0]!.origin))).map((h) => `/${h}/checkpoint`),
        fc.constantFrom(
          '/',
          '/health',
          '/log/checkpoint',
          '/build',
          '/openapi.json',
          '/metrics',
          '/v1/anchor',
          '/add-checkpoint',
          '//',
          '/v1//anchor',
          '/v1/anchor/',
        ),
        pathChars.map((p) => `/${p}`),
      );
      await fc.assert(
        fc.asyncProperty(
          paths,
          fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
          fc.option(fc.constantFrom('application/json', 'text/html', '*/*', 'application/json, text/html')),
          async (path, method, accept) => {
            const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined;
            await exchange(
              /^\/[0-9a-fA-F]{64}\/checkpoint$|^\/add-checkpoint/.test(path) ? 'cosign' : 'read',
              method,
              path,
              body,
              { ...(accept === null ? {} : { accept }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
              () => false,
            );
          },
        ),
        { numRuns: runs(800), seed: SEED + 2 },
      );

      // (d) POST /add-checkpoint: real checkpoints and proofs, mutated; wrong keys, sizes and proofs
      const strangerLog = new SyntheticLog(d.logs[0]!.origin, ed25519KeyFromSeed(fill(0x99)));
      const unknownLog = new SyntheticLog('unknown.rel.example/log', ed25519KeyFromSeed(fill(0x9a)));
      const addCp = fc.record({
        log: fc.nat({ max: 3 }),
        oldMode: fc.constantFrom('stored', 'stored', 'stored', 'zero', 'random'),
        oldRandom: fc.nat({ max: 80 }),
        grow: fc.integer({ min: -2, max: 20 }),
        signer: fc.constantFrom('log', 'log', 'log', 'log', 'stranger', 'unknown'),
        proof: fc.constantFrom('real', 'real', 'real', 'none', 'corrupt', 'extra'),
        tops: fc.oneof(
          { weight: 3, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.array(textOp, { minLength: 1, maxLength: 2 }) },
        ),
      });
      await fc.assert(
        fc.asyncProperty(addCp, async (c) => {
          const log = d.logs[c.log]!;
          const stored = cosigned.get(log.origin)!;
          const old = c.oldMode === 'stored' ? stored : c.oldMode === 'zero' ? 0 : c.oldRandom;
          const size = Math.max(0, stored + c.grow);
          const signerLog = c.signer === 'log' ? log : c.signer === 'stranger' ? strangerLog : unknownLog;
          let proof = old <= size && old > 0 ? log.proof(old, size) : [];
          if (c.proof === 'none') proof = [];
          if (c.proof === 'corrupt' && proof.length > 0)
            proof = proof.map((h, i) => (i === 0 ? Uint8Array.from(h, (x, j) => (j === 0 ? x ^ 0x80 : x)) : h));
          if (c.proof === 'extra') proof = [...proof, fill(0xee)];
          const note = signerLog.checkpoint(size, log.root(size));
          const body = applyText(formatAddCheckpointRequest(old, proof.slice(0, 63), note), c.tops);
          await exchange('cosign', 'POST', '/add-checkpoint', body, { 'content-type': 'text/plain' }, (a) => {
            if (a.status !== 200) return false;
            cosigned.set(log.origin, size);
            return true;
          });
        }),
        { numRuns: runs(1200), seed: SEED + 3 },
      );

      // (e) raw sockets: broken request lines, headers, framing
      const methods = fc.constantFrom('GET', 'POST', 'PUT', 'HEAD', 'OPTIONS', 'CONNECT', 'G\u0000T', 'FOO', 'POST ', '');
      const targets = fc.constantFrom(
        '/v1/anchor',
        '/add-checkpoint',
        '/health',
        '/log/checkpoint',
        '*',
        '/%',
        '/a b',
        'http://x/health',
        '/\u00e9',
        '/..%2f',
        '',
        '/v1/anchor?x=%zz',
        '/' + 'a'.repeat(3000),
      );
      const versions = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'HTTP/0.9', '');
      const headerSets = fc.array(
        fc.constantFrom(
          'Host: x',
          'Host: x\r\nHost: y',
          'Content-Type: application/json',
          'Content-Type: text/plain',
          'Content-Type: application/json; charset=utf-16',
          'Content-Length: 2',
          'Content-Length: 100000000',
          'Content-Length: -1',
          'Content-Length: 2\r\nContent-Length: 3',
          'Content-Length: 0x10',
          'Transfer-Encoding: chunked',
          'Transfer-Encoding: gzip',
          'Transfer-Encoding: chunked\r\nContent-Length: 2',
          'Content-Encoding: gzip',
          'Expect: 100-continue',
          'Expect: nonsense',
          'X-Forwarded-For: 1.2.3.4, junk',
          'Connection: close',
          'Connection: upgrade\r\nUpgrade: websocket',
          'Bad Header: x',
          ': empty',
          'X-Long: ' + 'a'.repeat(20_000),
          'X-Ctl: a\u0001b',
          'Accept: application/json',
        ),
        { maxLength: 5 },
      );
      const bodies = fc.constantFrom(
        '',
        '{}',
        '{"anchor":',
        '0\r\n\r\n',
        '5\r\n{"a":\r\n0\r\n\r\n',
        'zz\r\n',
        'old 0\n\nx\n',
        '\u0000\u0001',
        '{}GET / HTTP/1.1\r\n\r\n',
      );
      let silentCloses = 0;
      await fc.assert(
        fc.asyncProperty(methods, targets, versions, headerSets, bodies, async (m, tgt, v, hs, b) => {
          const data = Buffer.from(`${m} ${tgt} ${v}\r\n${hs.map((h) => h + '\r\n').join('')}\r\n${b}`, 'latin1');
          if (DEBUG) process.stderr.write(`raw> ${JSON.stringify(data.toString('latin1').slice(0, 100))}\n`);
          const a = await rawRequest(w.listen!.port, data, { timeoutMs: 1_500 });
          tally.requests++;
          if (a.status === 0) {
            silentCloses++;
            return;
          }
          tally.add('raw', { status: a.status, text: a.text, headers: a.headers });
          if ((tgt.startsWith('/add-checkpoint') || m === 'HEAD') && a.status < 500) return;
          const defect = refusalDefect({ status: a.status, headers: a.headers, text: a.text }, CODES);
          assert.equal(defect, undefined, `${JSON.stringify(data.toString('latin1').slice(0, 300))}: ${defect ?? ''}`);
          const now = await snapshot();
          assert.equal(now, state, 'a raw request changed the state');
        }),
        { numRuns: runs(300), seed: SEED + 4 },
      );

      // The node is still up and its log is consistent: every acknowledged anchor at its leaf.
      const health = await httpRequest(`${w.url}/health`);
      assert.equal(health.status, 200);
      const entries = await audit.audit(w.url);
      const found = checkAnchors(entries, acked);
      assert.equal(found.found, acked.length);
      assert.equal(audit.equivocations, 0);
      figures(t, 'fuzz-routes/witness', {
        requests: tally.requests,
        state_changes: tally.stateChanges,
        acknowledged_anchors: acked.length,
        found_in_log: found.found,
        duplicity_entries: found.duplicityEntries,
        log_size: entries.length,
        silent_closes_on_raw_garbage: silentCloses,
        answers: tally.top(),
      });
    } finally {
      agent.destroy();
      await w.close();
      cleanup();
    }
  },
);

void test('token bridge /token: no 5xx, SPEC §7 codes only, a nonce is consumed only by a 200', { timeout: 300_000 }, async (t) => {
  const { dir, cleanup } = tempDir('aw-rel-fuzz-bridge-');
  // The bridge runs on a clock 100× slower than the wall clock. The check below compares the nonce
  // store's size before and after each request, and the store drops expired entries (use + 121 s)
  // on every consume: with the wall clock, a long-profile run past 121 s saw a 200 whose consume also
  // purged the first nonce (size +0), a false "issued without consuming". On the slow clock nothing
  // expires during the run, so the size moves only by the request's own nonce.
  const wall0 = Date.now();
  const clock = (): number => wall0 + Math.floor((Date.now() - wall0) / 100);
  const bridge = await startBridge(
    { host: '127.0.0.1', port: 0, dev: true, keyDir: join(dir, 'keys'), rateLimit: null, alg: 'ES256', clock },
    pino({ level: 'silent' }),
  );
  const issuer = bridge.issuer.issuer;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const tally = new Tally();
    const root = ed25519KeyFromSeed(fill(0x61));
    const d1 = ed25519KeyFromSeed(fill(0x62));
    const d2 = ed25519KeyFromSeed(fill(0x63));
    const now = Math.floor(clock() / 1000);
    const chain = buildDidKeyChain(root, [
      { deviceKey: d1, capabilities: ['deploy:staging', 'sign_commit'], expiresAt: now + 86_400, timestamp: now - 60 },
      { deviceKey: d2, capabilities: ['deploy:staging'], expiresAt: now + 86_400, timestamp: now - 60 },
    ]);
    let issued = 0;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(structOp, { maxLength: 3 }),
        fc.array(textOp, { maxLength: 2 }),
        fc.constantFrom('none', 'none', 'none', 'iat-old', 'iat-future', 'wrong-issuer', 'wrong-device', 'reuse-nonce'),
        fc.boolean(),
        async (sops, tops, twist, ttl) => {
          n++;
          const nonce = twist === 'reuse-nonce' ? 'fuzz-reused-nonce-0001' : `fuzz-nonce-${String(n).padStart(12, '0')}`;
          const iat =
            twist === 'iat-old'
              ? Math.floor(clock() / 1000) - 120
              : twist === 'iat-future'
                ? Math.floor(clock() / 1000) + 120
                : Math.floor(clock() / 1000);
          const req = buildTokenRequest({
            chain,
            rootPublicKey: hexKey(root),
            audience: 'sts.amazonaws.com',
            issuer: twist === 'wrong-issuer' ? 'https://evil.example' : issuer,
            deviceKey: twist === 'wrong-device' ? d1 : d2,
            iat,
            nonce,
            ...(ttl ? { ttlSecs: 600 } : {}),
          });
          const text = applyText(JSON.stringify(applyStruct(req, sops)), tops);
          const before = bridge.service.nonces.size;
          const a = await httpRequest(`${bridge.url}/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: text,
            agent,
            timeoutMs: 15_000,
          });
          tally.add('token', a);
          const defect = refusalDefect(a, CODES);
          assert.equal(defect, undefined, defect);
          const after = bridge.service.nonces.size;
          if (a.status === 200) {
            issued++;
            assert.equal(after, before + 1, 'a token was issued without consuming its nonce');
          } else {
            assert.equal(after, before, `a refused request (${codeOf(a)}) consumed a nonce`);
          }
        },
      ),
      { numRuns: runs(1200), seed: SEED + 5 },
    );
    const health = await httpRequest(`${bridge.url}/health`);
    assert.equal(health.status, 200);
    figures(t, 'fuzz-routes/bridge', {
      requests: tally.requests,
      tokens_issued: issued,
      nonces_held: bridge.service.nonces.size,
      answers: tally.top(),
    });
  } finally {
    agent.destroy();
    await bridge.close();
    cleanup();
  }
});

// Monitor alerts (SPEC §6.1): every new finding POSTed to each --alert-webhook as
// anchor-witness/alert/v1 JSON, signed (X-Alert-Timestamp, X-Alert-Signature = HMAC-SHA256 over
// "<timestamp>.<body>") with --alert-secret-file; one alert per episode (a finding that clears and
// comes back is a new one); at least once, with retries (1 s doubling) from a queue kept in
// --state across restarts; redirects not followed; the webhook URL never printed beyond scheme and
// host. A local sink on loopback receives them; findings come from a fake witness on loopback.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import {
  ALERT_V,
  deliverDueAlerts,
  emptyMonitorState,
  enqueueAlerts,
  GIVE_UP_MS,
  parseWebhook,
  pendingAlerts,
  recordEpisodes,
  retryDelayMs,
  type AlertPayload,
  type Finding,
} from '../../src/client/monitor.ts';
import { parseJsonBody } from '../../src/client/http.ts';
import { parseRfc3339 } from '../../src/encoding/time.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import { FakeWitnessServer } from '../helpers/fake-witness-server.ts';
import { appendLeaf, checkpointNote, fakeWitness } from '../helpers/malicious-witness.ts';
import { CLIENT_CLI, runClientCli, type CliRun } from '../helpers/client-cli-run.ts';
import { tempDir } from '../helpers/tmp.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const tmp = tempDir('aw-alerts-');
const closers: (() => Promise<void>)[] = [];
after(async () => {
  await Promise.all(closers.map((c) => c()));
  tmp.cleanup();
});

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}
/** A webhook receiver: answers each POST with the next of `script` (then `then`), records everything. */
class Sink {
  readonly received: Received[] = [];
  script: number[] = [];
  then = 200;
  url = '';
  private server: Server | undefined;
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = this.script.shift() ?? this.then;
        this.received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {});
        res.end();
      });
    });
    this.url = `http://127.0.0.1:${await listenLoopback(this.server)}`;
    closers.push(() => this.stop());
    return this;
  }
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s !== undefined) await closeServer(s);
  }
  delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }
}

const SECRET = 'alert-secret-\u00e9t\u00e9';
const secretFile = join(tmp.dir, 'alert.key');
writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
/** What a receiver does (docs/client.md recipe): recompute the HMAC and compare. */
function signatureValid(r: Received): boolean {
  const ts = String(r.headers['x-alert-timestamp']);
  const expected = `sha256=${createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${ts}.${r.body}`).digest('hex')}`;
  return r.headers['x-alert-signature'] === expected;
}

const cosigner = ed25519Cosigner('c1.test', ed25519KeyFromSeed(fill(0xc1))).noteSigner(1_700_000_000);
/** A fake witness whose published checkpoint carries the cosigner's line or not. */
async function witness(seed: number): Promise<{ srv: FakeWitnessServer; witnessed: (yes: boolean) => void }> {
  const w = fakeWitness({ seed, name: `alert${seed}.test` });
  for (let i = 0; i < 3; i++) appendLeaf(w, fill(i, 8));
  const srv = await new FakeWitnessServer(w).start();
  closers.push(() => srv.stop());
  const witnessed = (yes: boolean): void => {
    srv.checkpoint = checkpointNote(w, 3, [ed25519NoteSigner(w.origin, w.key), ...(yes ? [cosigner] : [])]);
  };
  witnessed(false);
  return { srv, witnessed };
}
/** A port nothing listens on (a stopped sink's). */
async function deadUrl(): Promise<string> {
  const s = await new Sink().start();
  await s.stop();
  return s.url;
}

const cli = runClientCli;
const monitorArgs = (witnesses: string[], hook: string, state: string): string[] => [
  'monitor',
  '--json',
  '--retries',
  '0',
  '--timeout-ms',
  '3000',
  '--witness',
  witnesses.join(','),
  '--log-cosigner',
  cosigner.verifier.vkey,
  '--alert-webhook',
  hook,
  '--alert-secret-file',
  secretFile,
  '--state',
  state,
];
const pollOf = (stdout: string): { findings: Finding[]; alerts_sent: number; alerts_pending: number } =>
  parseJsonBody(stdout.trim().split('\n').at(-1)!) as never;

void test('the retry schedule is 1 s doubling to 5 min', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 8, 9, 10, 50].map(retryDelayMs), [1000, 2000, 4000, 8000, 16000, 128000, 256000, 300000, 300000]);
});

void test('episodes: one alert per episode of a finding, whatever its details do while it holds; cleared and back is a new alert', () => {
  const state = emptyMonitorState();
  const behind = (index: number): Finding => ({
    id: `withholding w1 ab ${index} 9`,
    subject: 'w1 ab',
    kind: 'withholding',
    severity: 'alert',
    witness: 'w1',
    url: 'https://w1.example',
    seed: 'ab',
    message: `behind at ${index}`,
    evidence: { index, expected: 9, by: 'w2', since: 100 },
  });
  const dark: Finding = {
    id: 'seed_dark ab',
    kind: 'seed_dark',
    severity: 'warning',
    seed: 'ab',
    message: 'dark',
    evidence: { index: 9, timestamp: '1970-01-01T00:00:00Z', witness: 'w2', dark_after: 60 },
  };
  const first = recordEpisodes(state, [behind(3), dark], 100);
  assert.equal(first.length, 2);
  const a = first.find((p) => p.kind === 'withholding')!;
  assert.deepEqual(Object.keys(a), ['v', 'id', 'kind', 'detected_at', 'witness', 'seed', 'summary', 'evidence']);
  assert.equal(a.v, ALERT_V);
  assert.match(a.id, /^[0-9a-f]{32}$/);
  assert.equal(a.detected_at, '1970-01-01T00:01:40Z');
  assert.equal(a.witness, 'https://w1.example');
  assert.equal(first.find((p) => p.kind === 'seed_dark')!.witness, null);
  // Still behind (now at index 5): the same episode, no alert.
  assert.deepEqual(recordEpisodes(state, [behind(5), dark], 160), []);
  // Cleared for one poll, then back: a new episode with a new id.
  assert.deepEqual(recordEpisodes(state, [dark], 220), []);
  const again = recordEpisodes(state, [behind(5), dark], 280);
  assert.equal(again.length, 1);
  assert.notEqual(again[0]!.id, a.id);
  assert.equal(again[0]!.detected_at, '1970-01-01T00:04:40Z');
});

void test('episodes: a witness the poll could not reach keeps its open episodes (no re-alert when it is back); a reachable one that clears ends them', () => {
  const state = emptyMonitorState();
  const behind: Finding = {
    id: 'withholding w1 ab 3 9',
    subject: 'w1 ab',
    kind: 'withholding',
    severity: 'alert',
    url: 'https://w1.example',
    seed: 'ab',
    message: 'behind',
    evidence: { index: 3, expected: 9, by: 'w2', since: 100 },
  };
  const down = (url: string): Finding => ({
    id: `unreachable ${url} checkpoint`,
    kind: 'unreachable',
    severity: 'warning',
    url,
    message: 'down',
  });
  const first = recordEpisodes(state, [behind], 100);
  assert.equal(first.length, 1);
  // w1 unreachable for a poll: its withholding was not looked at, so the episode stays open …
  assert.deepEqual(
    recordEpisodes(state, [down('https://w1.example')], 160).map((p) => p.kind),
    ['unreachable'],
  );
  // … and when w1 answers again, still behind, nothing is re-alerted.
  assert.deepEqual(recordEpisodes(state, [behind], 220), []);
  // Another witness being down does not hold w1's episodes open: w1 answered and the finding cleared.
  assert.deepEqual(
    recordEpisodes(state, [down('https://w2.example')], 280).map((p) => p.kind),
    ['unreachable'],
  );
  const again = recordEpisodes(state, [behind], 340);
  assert.equal(again.length, 1);
  assert.notEqual(again[0]!.id, first[0]!.id);
});

void test('webhook URLs: https://, or http:// on loopback only; shown as scheme and host', () => {
  assert.equal(parseWebhook('https://hooks.example/services/T0KEN?x=1').shown, 'https://hooks.example');
  assert.equal(parseWebhook('http://127.0.0.1:8080/T0KEN').shown, 'http://127.0.0.1:8080');
  assert.equal(parseWebhook('http://[::1]/x').shown, 'http://[::1]');
  for (const bad of ['http://hooks.example/T0KEN', 'ftp://127.0.0.1/x', 'not a url']) {
    assert.throws(
      () => parseWebhook(bad),
      (e: Error & { code?: string }) => e.code === 'usage' && !e.message.includes('T0KEN'),
    );
  }
});

void test('an alert not delivered within 24 h is dropped (and logged without the URL)', async () => {
  const state = emptyMonitorState();
  const hook = parseWebhook(`${await deadUrl()}/hook/T0KEN`);
  const payload: AlertPayload = {
    v: ALERT_V,
    id: 'a'.repeat(32),
    kind: 'unreachable',
    detected_at: '2023-11-14T22:13:20Z',
    witness: null,
    seed: null,
    summary: 's',
    evidence: {},
  };
  let now = 1_700_000_000_000;
  enqueueAlerts(state, [payload, payload], [hook], now);
  assert.equal(pendingAlerts(state), 1, 'once per id and webhook');
  const log: string[] = [];
  const d = { webhooks: [hook], http: { timeoutMs: 2000 }, now: () => now, log: (l: string) => log.push(l) };
  assert.deepEqual(await deliverDueAlerts(state, d), { sent: 0 });
  assert.equal(state.alerts!.queue[0]!.attempts, 1);
  assert.equal(state.alerts!.queue[0]!.next_ms, now + 1000);
  now += 999;
  await deliverDueAlerts(state, d);
  assert.equal(state.alerts!.queue[0]!.attempts, 1, 'not due yet');
  now = 1_700_000_000_000 + GIVE_UP_MS;
  await deliverDueAlerts(state, d);
  assert.equal(pendingAlerts(state), 0);
  assert.match(log.at(-1)!, /^alert a{32} to http:\/\/127\.0\.0\.1:\d+: gave up after 1 attempts in 24 h/);
  assert.ok(
    log.every((l) => !l.includes('T0KEN')),
    log.join('\n'),
  );
});

void test('monitor --once: one signed alert per new finding; the next run sends none; a finding that clears and returns is a new alert; the URL never printed', async () => {
  const sink = await new Sink().start();
  const { srv, witnessed } = await witness(0x71);
  const dead = await deadUrl();
  const hook = `${sink.url}/hook/S3CRET-T0KEN?key=abc`;
  const state = join(tmp.dir, 'once.json');
  const html = join(tmp.dir, 'once.html');
  const args = [...monitorArgs([srv.url, dead], hook, state), '--once', '--html', html];
  const runs: CliRun[] = [];
  const r1 = await cli(args);
  runs.push(r1);
  assert.equal(r1.code, 1, r1.stderr);
  const p1 = pollOf(r1.stdout);
  assert.deepEqual(p1.findings.map((f) => f.kind).sort(), ['log_unwitnessed', 'unreachable']);
  assert.equal(p1.alerts_sent, 2);
  assert.equal(p1.alerts_pending, 0);
  assert.equal(sink.received.length, 2);
  const now = Math.floor(Date.now() / 1000);
  for (const r of sink.received) {
    assert.equal(r.path, '/hook/S3CRET-T0KEN?key=abc');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.ok(Math.abs(Number(r.headers['x-alert-timestamp']) - now) < 60);
    assert.ok(signatureValid(r), 'the HMAC verifies with the secret (the file without its final newline)');
    assert.ok(!signatureValid({ ...r, body: r.body.replace('"summary"', '"summary" ') }), 'and not for another body');
    const body = parseJsonBody(r.body) as AlertPayload;
    assert.equal(body.v, 'anchor-witness/alert/v1');
    assert.match(body.id, /^[0-9a-f]{32}$/);
    assert.ok(Number.isFinite(parseRfc3339(body.detected_at).seconds));
    assert.equal(body.seed, null);
    assert.equal(typeof body.summary, 'string');
    assert.equal(body.witness, body.kind === 'log_unwitnessed' ? srv.url : dead);
    if (body.kind === 'log_unwitnessed') assert.equal(typeof body.evidence.checkpoint, 'string');
  }
  const firstId = (parseJsonBody(sink.received.find((r) => r.body.includes('log_unwitnessed'))!.body) as AlertPayload).id;

  // The same findings at the next run: the same episodes, nothing sent.
  const r2 = await cli(args);
  runs.push(r2);
  assert.equal(r2.code, 1);
  assert.deepEqual([pollOf(r2.stdout).alerts_sent, pollOf(r2.stdout).alerts_pending], [0, 0]);
  assert.equal(sink.received.length, 2);

  // log_unwitnessed clears (the quorum is back), then returns: a new alert with a new id.
  witnessed(true);
  runs.push(await cli(args));
  assert.equal(sink.received.length, 2);
  witnessed(false);
  const r4 = await cli(args);
  runs.push(r4);
  assert.equal(pollOf(r4.stdout).alerts_sent, 1);
  assert.equal(sink.received.length, 3);
  const back = parseJsonBody(sink.received[2]!.body) as AlertPayload;
  assert.equal(back.kind, 'log_unwitnessed');
  assert.notEqual(back.id, firstId);

  // The webhook URL is a secret: not in any output, the report or the state file.
  const texts = [...runs.flatMap((r) => [r.stdout, r.stderr]), readFileSync(html, 'utf8'), readFileSync(state, 'utf8')];
  for (const t of texts) assert.ok(!t.includes('S3CRET') && !t.includes('key=abc'), t);
});

void test('a sink that fails twice then recovers gets each alert exactly once, after the retries (1 s, 2 s), however many polls see it', async () => {
  const sink = await new Sink().start();
  sink.script = [500, 500];
  const { srv } = await witness(0x72);
  const dead = await deadUrl();
  const state = join(tmp.dir, 'retry.json');
  const child = spawn(
    process.execPath,
    [CLIENT_CLI, ...monitorArgs([srv.url, dead], `${sink.url}/hook/S3CRET`, state), '--interval', '1'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => {
      resolve();
    });
  });
  closers.push(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const polls = (): number => stdout.split('\n').filter((l) => l.startsWith('{')).length;
  const deadline = Date.now() + 30_000;
  while (sink.delivered().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(sink.delivered().length, 2, `${stdout}\n${stderr}`);
  const after = polls();
  while (polls() < after + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGTERM');
  await exited;
  assert.ok(polls() >= 3, 'several polls saw the findings');
  // 2 failures (the first alert twice; the second deferred behind it), then each once.
  assert.deepEqual(
    sink.received.map((r) => r.status),
    [500, 500, 200, 200],
  );
  const ids = sink.delivered().map((r) => (parseJsonBody(r.body) as AlertPayload).id);
  assert.equal(new Set(ids).size, 2);
  assert.equal((parseJsonBody(sink.received[0]!.body) as AlertPayload).id, ids[0]);
  for (const r of sink.received) assert.ok(signatureValid(r));
  const gaps = [1, 2].map(
    (i) => Number(sink.received[i]!.headers['x-alert-timestamp']) - Number(sink.received[i - 1]!.headers['x-alert-timestamp']),
  );
  assert.ok(gaps[0]! >= 0 && gaps[0]! <= 2 && gaps[1]! >= 1 && gaps[1]! <= 3, `retry gaps ${gaps.join(', ')} s`);
  assert.match(stderr, /to http:\/\/127\.0\.0\.1:\d+: HTTP 500; attempt 1, retry in 1 s/);
  assert.match(stderr, /attempt 2, retry in 2 s/);
  assert.ok(!stderr.includes('S3CRET') && !stdout.includes('S3CRET'));
  assert.equal(pollOf(stdout).alerts_pending, 0);
});

void test('the queue survives a restart (--state): alerts a redirecting sink did not take are sent by the next run, same bodies', async () => {
  const sink = await new Sink().start();
  sink.then = 302; // a redirect is not followed: a failure
  const { srv } = await witness(0x73);
  const state = join(tmp.dir, 'restart.json');
  const args = [...monitorArgs([srv.url], `${sink.url}/hook`, state), '--once'];
  const r1 = await cli(args);
  assert.equal(r1.code, 1, r1.stderr);
  assert.deepEqual([pollOf(r1.stdout).alerts_sent, pollOf(r1.stdout).alerts_pending], [0, 1]);
  assert.match(r1.stderr, /HTTP 302 \(redirects are not followed\); attempt 1, retry in 1 s/);
  assert.ok(
    sink.received.every((r) => r.path === '/hook'),
    'the Location was never requested',
  );
  const saved = parseJsonBody(readFileSync(state, 'utf8')) as { alerts: { queue: { id: string; webhook: string; attempts: number }[] } };
  assert.equal(saved.alerts.queue.length, 1);
  assert.equal(saved.alerts.queue[0]!.attempts, 1);
  assert.match(saved.alerts.queue[0]!.webhook, /^[0-9a-f]{64}$/, 'the state names the webhook by hash');

  sink.then = 204;
  await new Promise((r) => setTimeout(r, 1100)); // the retry is due 1 s after the failure
  const r2 = await cli(args);
  assert.deepEqual([pollOf(r2.stdout).alerts_sent, pollOf(r2.stdout).alerts_pending], [1, 0], r2.stderr);
  assert.deepEqual(
    sink.received.map((r) => r.status),
    [302, 204],
  );
  assert.equal(sink.received[1]!.body, sink.received[0]!.body);
  assert.equal((parseJsonBody(sink.received[1]!.body) as AlertPayload).id, saved.alerts.queue[0]!.id);
  const r3 = await cli(args);
  assert.equal(pollOf(r3.stdout).alerts_sent, 0);
  assert.equal(sink.received.length, 2);
});

void test('monitor refuses a plain-http webhook off loopback (exit 2, URL not printed) and --alert-secret-file without a webhook', async () => {
  const r = await cli(['monitor', '--once', '--witness', 'http://127.0.0.1:1', '--alert-webhook', 'http://hooks.example/T0KEN']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--alert-webhook http:\/\/hooks\.example…: must be https:\/\//);
  assert.ok(!r.stderr.includes('T0KEN'));
  const s = await cli(['monitor', '--once', '--witness', 'http://127.0.0.1:1', '--alert-secret-file', secretFile]);
  assert.equal(s.code, 2);
  assert.match(s.stderr, /--alert-secret-file needs --alert-webhook/);
});

// The https-bastion backend end to end (SPEC §5.6, §5.7 "Bastion"): an in-process fake bastion
// (TLS 1.3 server asking for a client certificate, ALPN bastion/0, then `http2.connect` over the
// accepted socket, as litebastion does) in front of an in-process node with the cosign role.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { createPublicKey } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { bastionKeyHash } from '../../src/crypto/bastion-certificate.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { startBastionBackends } from '../../src/bastion/backends.ts';
import { bastionClientIp } from '../../src/bastion/serving.ts';
import { formatIp } from '../../src/server/ip.ts';
import { createServer } from '../../src/server/server.ts';
import { ReconnectSchedule } from '../../src/bastion/reconnect.ts';
import type { RunningWitness, WitnessConfig } from '../../src/witness/node.ts';
import { cosignKeyC, LOG_NAME, logKeyC, logsDoc, SyntheticLog } from '../helpers/cosign-harness.ts';
import { localhostCertificate, startFakeBastion, type FakeBastion } from '../helpers/fake-bastion.ts';
import { fill } from '../helpers/anchors.ts';
import { startTestWitness } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/poll.ts';

const bastionKey = ed25519KeyFromSeed(fill(0x77));
const KH = bastionKeyHash(bastionKey);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Env {
  dir: string;
  log: SyntheticLog;
  fake: FakeBastion;
  node: RunningWitness;
  cleanup(): Promise<void>;
}

async function startEnv(over: Partial<WitnessConfig> = {}, fake?: FakeBastion): Promise<Env> {
  const t = tempDir('aw-bastion-');
  const dir = t.dir;
  const cosignKeyFile = join(dir, 'cosign.pem');
  writeNewKeyFile(cosignKeyFile, ed25519PrivateKeyToPem(cosignKeyC));
  const bastionKeyFile = join(dir, 'bastion.pem');
  writeNewKeyFile(bastionKeyFile, ed25519PrivateKeyToPem(bastionKey));
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  const logsFile = join(dir, 'logs.json');
  writeFileSync(logsFile, JSON.stringify(logsDoc({ origin: LOG_NAME, keys: [log.vkey] })));
  const f = fake ?? (await startFakeBastion());
  const caFile = join(dir, 'bastion-ca.pem');
  writeFileSync(caFile, f.ca);
  const node = await startTestWitness(
    dir,
    { parties: [] },
    {
      roles: ['cosign'],
      cosignKeyFiles: [cosignKeyFile],
      logsFile,
      bastions: [f.addr],
      bastionKeyFile,
      bastionCaFile: caFile,
      ...over,
    },
  );
  const env: Env = {
    dir,
    log,
    fake: f,
    node,
    cleanup: async () => {
      await node.close();
      await env.fake.close();
      t.cleanup();
    },
  };
  return env;
}

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

async function direct(node: RunningWitness, method: string, path: string, body?: string): Promise<Answer> {
  const res = await fetch(node.url + path, { method, ...(body === undefined ? {} : { body }) });
  return { status: res.status, type: res.headers.get('content-type') ?? undefined, body: await res.text() };
}

async function viaBastion(
  fake: FakeBastion,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const a = await fake.request(KH, { method, path, headers, ...(body === undefined ? {} : { body }) });
  const type = a.headers['content-type'];
  return { status: a.status, type: typeof type === 'string' ? type : undefined, body: a.body.toString('utf8') };
}

/** A problem+json body without its request-specific members. */
function problemCode(a: Answer): unknown {
  return (JSON.parse(a.body) as { code?: unknown }).code;
}

void test('through the bastion: the same answers as direct requests (add-checkpoint 200/409/404, monitoring, /health, 404s, 413)', async () => {
  const env = await startEnv({ maxBodyBytes: 4096 });
  try {
    const { fake, node, log } = env;
    await fake.waitForBackend(KH);
    // 200 through the bastion, then the same request is 409 both ways with the same body.
    const first = await viaBastion(fake, 'POST', '/add-checkpoint', log.request(0, 5));
    assert.equal(first.status, 200);
    assert.match(first.body, /^— witness\.test\/w1 [A-Za-z0-9+/=]+\n$/);
    const d409 = await direct(node, 'POST', '/add-checkpoint', log.request(0, 5));
    const b409 = await viaBastion(fake, 'POST', '/add-checkpoint', log.request(0, 5));
    assert.deepEqual(b409, d409);
    assert.deepEqual(b409, { status: 409, type: 'text/x.tlog.size', body: '5\n' });
    // The next size is 200 both ways (one each).
    assert.equal((await direct(node, 'POST', '/add-checkpoint', log.request(5, 7))).status, 200);
    assert.equal((await viaBastion(fake, 'POST', '/add-checkpoint', log.request(7, 9))).status, 200);
    // Unknown origin: 404 with the same one-line body.
    const other = new SyntheticLog('other.example/log', logKeyC);
    const d404 = await direct(node, 'POST', '/add-checkpoint', other.request(0, 3));
    assert.equal(d404.status, 404);
    assert.deepEqual(await viaBastion(fake, 'POST', '/add-checkpoint', other.request(0, 3)), d404);
    // The monitoring endpoint: the same note.
    const path = `/${sha256Hex(LOG_NAME)}/checkpoint`;
    const dMon = await direct(node, 'GET', path);
    assert.equal(dMon.status, 200);
    assert.match(dMon.body, /^example\.com\/log\n9\n/);
    assert.deepEqual(await viaBastion(fake, 'GET', path), dMon);
    const missing = `/${sha256Hex('nobody.example/log')}/checkpoint`;
    assert.deepEqual(await viaBastion(fake, 'GET', missing), await direct(node, 'GET', missing));
    // /health: the same body, with the bastion's state.
    const dHealth = await direct(node, 'GET', '/health');
    assert.deepEqual(await viaBastion(fake, 'GET', '/health'), dHealth);
    assert.deepEqual((JSON.parse(dHealth.body) as { bastions: unknown }).bastions, [{ addr: fake.addr, connected: true }]);
    // An unknown path is 404 both ways; routes served only on the listener are 404 through the bastion.
    const dNope = await direct(node, 'GET', '/nope');
    const bNope = await viaBastion(fake, 'GET', '/nope');
    assert.equal(bNope.status, 404);
    assert.equal(problemCode(bNope), problemCode(dNope));
    assert.equal((await direct(node, 'GET', '/metrics')).status, 200);
    assert.equal(problemCode(await viaBastion(fake, 'GET', '/metrics')), 'not_found');
    assert.equal((await direct(node, 'GET', '/log/checkpoint')).status, 200);
    assert.equal((await viaBastion(fake, 'GET', '/log/checkpoint')).status, 404);
    assert.equal((await viaBastion(fake, 'GET', '/')).status, 404);
    // A wrong method on a served path: 405 + Allow, as direct.
    const b405 = await fake.request(KH, { method: 'GET', path: '/add-checkpoint' });
    assert.equal(b405.status, 405);
    assert.equal(b405.headers.allow, 'POST');
    // Body cap: 413 both ways.
    const big = 'x'.repeat(5000);
    const d413 = await direct(node, 'POST', '/add-checkpoint', big);
    const b413 = await viaBastion(fake, 'POST', '/add-checkpoint', big);
    assert.equal(d413.status, 413);
    assert.equal(b413.status, 413);
    assert.equal(problemCode(b413), problemCode(d413));
    // Metrics: requests through the bastion carry via="bastion"; the connection is counted.
    const m = (await direct(node, 'GET', '/metrics')).body;
    assert.match(m, /http_requests_total\{route="\/add-checkpoint",method="POST",status="200",via="bastion"\} 2/);
    assert.match(m, /http_requests_total\{route="\/add-checkpoint",method="POST",status="200"\} 1/);
    assert.match(m, /http_requests_total\{route="\/add-checkpoint",method="POST",status="413",via="bastion"\} 1/);
    assert.match(m, new RegExp(`bastion_connected\\{addr="${fake.addr}"\\} 1`));
    assert.match(m, new RegExp(`bastion_connects_total\\{addr="${fake.addr}",outcome="ok"\\} 1`));
    // The backend presented an Ed25519 certificate of the bastion key.
    const cert = fake.clientCerts[0]!;
    assert.equal(cert.verify(createPublicKey(bastionKey)), true);
    assert.equal(cert.checkPrivateKey(bastionKey), true);
    assert.equal(cert.subject, 'CN=Bastion backend');
    assert.equal(
      Buffer.from(ed25519PublicKeyBytes(cert.publicKey)).toString('hex'),
      Buffer.from(ed25519PublicKeyBytes(bastionKey)).toString('hex'),
    );
  } finally {
    await env.cleanup();
  }
});

void test('X-Forwarded-For is the client IP: one address counts for itself, none or a list counts for the bastion', async () => {
  const env = await startEnv({ rateLimit: { rps: 0.001, burst: 1 } });
  try {
    const { fake, node } = env;
    const post = (xff?: string): Promise<Answer> =>
      viaBastion(fake, 'POST', '/add-checkpoint', 'not a request', xff === undefined ? {} : { 'x-forwarded-for': xff });
    assert.equal((await post('203.0.113.5')).status, 400);
    const limited = await post('203.0.113.5');
    assert.equal(limited.status, 429);
    assert.match(limited.body, /too many requests/);
    assert.equal((await post('2001:db8::5')).status, 400); // another client
    assert.equal((await post()).status, 400); // none: the bastion's address (127.0.0.1)
    assert.equal((await post('203.0.113.7, 203.0.113.8')).status, 429); // a list: the bastion's address again
    assert.equal((await post('not-an-ip')).status, 429);
    // A direct request from 127.0.0.1 shares the bastion's bucket.
    assert.equal((await direct(node, 'POST', '/add-checkpoint', 'x')).status, 429);
    // The rule itself.
    const ip = (h: Record<string, string | string[]>, peer?: string): string => formatIp(bastionClientIp(h, peer));
    assert.equal(ip({ 'x-forwarded-for': ' 198.51.100.1 ' }, '10.0.0.1'), '198.51.100.1');
    assert.equal(ip({ 'x-forwarded-for': '2001:DB8::1' }, '10.0.0.1'), '2001:db8::1');
    assert.equal(ip({}, '::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(ip({ 'x-forwarded-for': '1.2.3.4, 5.6.7.8' }, '10.0.0.1'), '10.0.0.1');
    assert.equal(ip({ 'x-forwarded-for': ['1.2.3.4', '5.6.7.8'] }, '10.0.0.1'), '10.0.0.1');
    assert.equal(ip({ 'x-forwarded-for': '1.2.3.4:80' }, '10.0.0.1'), '10.0.0.1');
    assert.equal(ip({}, undefined), '::');
  } finally {
    await env.cleanup();
  }
});

async function refusedPeer(fakeOpts: Parameters<typeof startFakeBastion>[0], outcome: string): Promise<void> {
  const fake = await startFakeBastion(fakeOpts);
  const registry = new Registry();
  const app = await createServer({ metrics: registry });
  await app.ready();
  const backends = startBastionBackends({ key: { key: bastionKey, keyHash: KH }, addresses: [fake.addr], ca: fake.ca, app, registry });
  try {
    const pattern = new RegExp(`bastion_connects_total\\{addr="${fake.addr}",outcome="${outcome}"\\} [1-9]`);
    await waitFor(`${pattern} in the metrics`, async () => pattern.test(await registry.metrics()), 10_000);
    const m = await registry.metrics();
    assert.doesNotMatch(m, /outcome="ok"/);
    assert.deepEqual(backends.status(), [{ addr: fake.addr, connected: false }]);
    assert.equal(fake.backend(KH), undefined);
  } finally {
    await backends.close();
    await fake.close();
    await app.close();
  }
}

void test('a TLS 1.2-only peer is refused (tls_error)', async () => {
  await refusedPeer({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }, 'tls_error');
});

void test('a peer that does not negotiate bastion/0 is refused: another ALPN (tls_error), none at all (alpn_mismatch)', async () => {
  await refusedPeer({ alpn: ['h2'] }, 'tls_error');
  await refusedPeer({ alpn: null }, 'alpn_mismatch');
});

void test('a bastion whose certificate is not trusted (no --bastion-ca) is refused', async () => {
  const fake = await startFakeBastion();
  const registry = new Registry();
  const app = await createServer({ metrics: registry });
  await app.ready();
  const backends = startBastionBackends({ key: { key: bastionKey, keyHash: KH }, addresses: [fake.addr], app, registry });
  try {
    await waitFor('a tls_error connect', async () => /outcome="tls_error"\} [1-9]/.test(await registry.metrics()), 10_000);
    assert.equal(fake.backend(KH), undefined);
  } finally {
    await backends.close();
    await fake.close();
    await app.close();
  }
});

void test('the node reconnects after the bastion restarts, with a fresh certificate', async () => {
  const env = await startEnv();
  try {
    const { fake, node, log } = env;
    await fake.waitForBackend(KH);
    assert.equal((await viaBastion(fake, 'POST', '/add-checkpoint', log.request(0, 3))).status, 200);
    const port = fake.port;
    await fake.close();
    await waitFor('the bastion connection down', () => node.bastions?.status()[0]?.connected === false, 10_000);
    const health = JSON.parse((await direct(node, 'GET', '/health')).body) as { bastions: unknown };
    assert.deepEqual(health.bastions, [{ addr: `localhost:${port}`, connected: false }]);
    const again = await startFakeBastion({ port, cert: fake.cert });
    env.fake = again;
    await again.waitForBackend(KH, 10_000);
    assert.equal((await viaBastion(again, 'POST', '/add-checkpoint', log.request(3, 4))).status, 200);
    await waitFor('the bastion connection up', () => node.bastions?.status()[0]?.connected === true, 10_000);
    const m = (await direct(node, 'GET', '/metrics')).body;
    assert.match(m, new RegExp(`bastion_connects_total\\{addr="localhost:${port}",outcome="ok"\\} 2`));
    assert.equal(again.clientCerts.length, 1);
    assert.equal(again.clientCerts[0]!.checkPrivateKey(bastionKey), true);
    assert.ok(again.clientCerts[0]!.validFromDate.getTime() >= fake.clientCerts[0]!.validFromDate.getTime()); // built at each connect
  } finally {
    await env.cleanup();
  }
});

void test('PINGs: answered ones keep the connection; an unanswered one drops it and the node dials again', async () => {
  const timing = { pingAfterMs: 150, pingTimeoutMs: 200 };
  // A live bastion answers PINGs (its HTTP/2 stack does): one connection throughout.
  const env = await startEnv({ bastionTiming: timing });
  try {
    const session = await env.fake.waitForBackend(KH);
    // The bastion's own PING is answered by the node.
    await new Promise<void>((resolve, reject) => {
      session.ping((err) => {
        if (err === null) resolve();
        else reject(err);
      });
    });
    await sleep(900);
    assert.equal(env.node.bastions?.connections[0]?.connects, 1);
    assert.ok(env.node.bastions.connections[0].pings >= 3, `pings ${env.node.bastions.connections[0].pings}`); // one per silence
    assert.equal(env.node.bastions.connections[0].connected, true);
  } finally {
    await env.cleanup();
  }
  // A silent one: TLS and ALPN fine, the HTTP/2 preface and SETTINGS, then nothing more.
  const cert = localhostCertificate();
  let accepted = 0;
  const sockets: tls.TLSSocket[] = [];
  const silent = tls.createServer(
    {
      key: cert.keyPem,
      cert: cert.certPem,
      minVersion: 'TLSv1.3',
      ALPNProtocols: ['bastion/0'],
      requestCert: true,
      rejectUnauthorized: false,
    },
    (socket) => {
      accepted++;
      sockets.push(socket);
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from('000000040000000000', 'hex')]));
    },
  );
  await new Promise<void>((r) =>
    silent.listen(0, '127.0.0.1', () => {
      r();
    }),
  );
  const addr = `localhost:${(silent.address() as AddressInfo).port}`;
  const registry = new Registry();
  const app = await createServer({ metrics: registry });
  await app.ready();
  const backends = startBastionBackends({
    key: { key: bastionKey, keyHash: KH },
    addresses: [addr],
    ca: cert.certPem,
    app,
    registry,
    timing,
  });
  try {
    await waitFor('a second connection', () => accepted >= 2, 5_000); // dropped after 150 + 200 ms, dialled again after 100 ms
    assert.ok((backends.connections[0]?.connects ?? 0) >= 2);
  } finally {
    await backends.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) =>
      silent.close(() => {
        r();
      }),
    );
    await app.close();
  }
});

void test('reconnect schedule: 0.1, 1, 1, 1, 5, 15, 30, then 60 s; reset after 5 minutes up', () => {
  const s = new ReconnectSchedule();
  const seen = Array.from({ length: 10 }, () => s.next());
  assert.deepEqual(seen, [100, 1000, 1000, 1000, 5000, 15000, 30000, 60000, 60000, 60000]);
  s.ended(299_999);
  assert.equal(s.next(), 60000);
  s.ended(300_000);
  assert.equal(s.next(), 100);
  assert.equal(s.next(), 1000);
});

// Log lists over HTTPS (SPEC §5.5): a local TLS server (certificate made by the openssl CLI in the
// test), the SSRF guard on the connected address (IP literals, resolved names, redirects), the
// limits (status, redirects, timeout, size) and, through the role, that every failure keeps the
// previous state and a URL failing at start does not stop start-up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ListFetchError } from '../../src/cosign/errors.ts';
import {
  fetchList,
  isForbiddenAddress,
  listSourceLabel,
  parseListUrl,
  type ListFetchOptions,
  type ListLookup,
} from '../../src/cosign/list-fetch.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { SyntheticLog, seq, startCosign } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';

const HOST = 'lists.test';
const tmp = tempDir();
let ca = '';
let server: Server;
let port = 0;
let list = 'logs/v0\n';
const handlers = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();

before(async () => {
  // A self-signed certificate for lists.test and 127.0.0.1 (the openssl CLI: Node cannot make X.509).
  const key = join(tmp.dir, 'key.pem');
  const cert = join(tmp.dir, 'cert.pem');
  selfSignedCertificate({
    keyFile: key,
    certFile: cert,
    host: HOST,
    subjectAltName: `DNS:${HOST},DNS:internal.test,IP:127.0.0.1,IP:127.0.0.2`,
  });
  ca = readFileSync(cert, 'utf8');
  server = createHttpsServer({ key: readFileSync(key), cert: ca }, (req, res) => {
    const h = handlers.get((req.url ?? '').split('?')[0]!);
    if (h !== undefined) {
      h(req, res);
      return;
    }
    if (req.url === '/log-list.1') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(list);
      return;
    }
    res.writeHead(404).end('not found\n');
  });
  port = await listenLoopback(server);
});

after(async () => {
  await closeServer(server);
  tmp.cleanup();
});

/** A resolver: each name to the given address (tests never reach real DNS). */
const resolver =
  (table: Record<string, string>): ListLookup =>
  (host, cb) => {
    const a = table[host];
    if (a === undefined) cb(Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' }), []);
    else cb(null, [{ address: a, family: a.includes(':') ? 6 : 4 }]);
  };

/** Outside --dev, the test server (127.0.0.1) is let through by name only: every other address keeps the guard. */
const guarded = (extra: Record<string, string> = {}): ListFetchOptions => ({
  ca,
  lookup: resolver({ [HOST]: '127.0.0.1', ...extra }),
  allowAddress: (a) => a === '127.0.0.1',
});

const url = (path: string, host = HOST): URL => new URL(`https://${host}:${port}${path}`);

async function refused(p: Promise<unknown>, code: string, pattern?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ListFetchError, String(e));
    assert.equal(e.code, code, e.message);
    if (pattern !== undefined) assert.match(e.message, pattern);
    return true;
  });
}

void test('address guard: loopback, private, link-local, unique-local and the other non-public ranges', () => {
  for (const a of [
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    'not an address',
  ])
    assert.equal(isForbiddenAddress(a), true, a);
  for (const a of [
    '1.1.1.1',
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
  ]) {
    assert.equal(isForbiddenAddress(a), false, a);
  }
});

void test('list URLs: https only (http only with --dev); labels drop credentials and the query', () => {
  assert.equal(parseListUrl('https://a.example/l', false).href, 'https://a.example/l');
  assert.throws(
    () => parseListUrl('http://127.0.0.1/l', false),
    (e: unknown) => e instanceof ListFetchError && e.code === 'invalid_list_url',
  );
  assert.equal(parseListUrl('http://127.0.0.1/l', true).protocol, 'http:');
  assert.equal(parseListUrl('http://[::1]:8080/l', true).protocol, 'http:');
  assert.equal(parseListUrl('http://localhost/l', true).protocol, 'http:');
  assert.throws(
    () => parseListUrl('http://lists.example/l', true),
    (e: unknown) => e instanceof ListFetchError && e.code === 'invalid_list_url',
  );
  assert.throws(() => parseListUrl('ftp://a.example/l', true), ListFetchError);
  assert.throws(() => parseListUrl('https://', false), ListFetchError);
  assert.equal(
    listSourceLabel(new URL('https://user:secret@a.example:8443/p/log-list.1?token=x#f')),
    'https://a.example:8443/p/log-list.1',
  );
});

void test('https fetch from a local TLS server: 200 only, the body as text', async () => {
  list = 'logs/v0\n# hello\n';
  assert.equal(await fetchList(url('/log-list.1'), guarded()), list);
  // --dev reaches loopback without an exception (the certificate also names 127.0.0.1).
  assert.equal(await fetchList(new URL(`https://127.0.0.1:${port}/log-list.1`), { ca, dev: true }), list);
  // The certificate is checked: without the CA the fetch fails.
  await refused(fetchList(url('/log-list.1'), { ...guarded(), ca: undefined }), 'fetch_failed');
  await refused(fetchList(url('/missing'), guarded()), 'http_status', /HTTP 404/);
  handlers.set('/204', (_q, r) => r.writeHead(204).end());
  await refused(fetchList(url('/204'), guarded()), 'http_status', /HTTP 204/);
});

void test('SSRF guard outside --dev: a name or literal reaching loopback/private/link-local/unique-local is refused at connect', async () => {
  const none: ListFetchOptions = { ca };
  await refused(fetchList(new URL(`https://127.0.0.1:${port}/log-list.1`), none), 'address_refused');
  await refused(fetchList(new URL(`https://[::1]:${port}/log-list.1`), none), 'address_refused');
  await refused(fetchList(new URL(`https://[::ffff:127.0.0.1]:${port}/log-list.1`), none), 'address_refused');
  for (const a of ['127.0.0.1', '10.0.0.7', '169.254.169.254', 'fc00::1', 'fe80::1', '192.168.0.10']) {
    await refused(
      fetchList(url('/log-list.1', 'evil.test'), { ca, lookup: resolver({ 'evil.test': a }) }),
      'address_refused',
      /non-public/,
    );
  }
  // DNS rebinding: the name is resolved by the socket itself, so whatever it answers then is checked.
  let calls = 0;
  const rebinding: ListLookup = (_h, cb) => {
    calls++;
    cb(null, [{ address: calls === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
  };
  rebinding('x', () => undefined); // a resolver that answered "public" once already
  await refused(fetchList(url('/log-list.1', 'rebind.test'), { ca, lookup: rebinding }), 'address_refused');
});

void test('redirects: at most 3, every hop https:// and through the guard', async () => {
  const redirect = (to: string) => (_q: IncomingMessage, r: ServerResponse) => r.writeHead(302, { location: to }).end();
  handlers.set('/r1', redirect('/r2'));
  handlers.set('/r2', redirect(`https://${HOST}:${port}/r3`));
  handlers.set('/r3', redirect('/log-list.1'));
  handlers.set('/r0', redirect('/r1'));
  list = 'logs/v0\n# redirected\n';
  assert.equal(await fetchList(url('/r1'), guarded()), list, 'three redirects');
  await refused(fetchList(url('/r0'), guarded()), 'too_many_redirects');
  handlers.set('/to-loopback', redirect(`https://127.0.0.2:${port}/log-list.1`));
  await refused(fetchList(url('/to-loopback'), guarded()), 'address_refused');
  handlers.set('/to-private', redirect(`https://internal.test:${port}/log-list.1`));
  await refused(fetchList(url('/to-private'), guarded({ 'internal.test': '10.0.0.7' })), 'address_refused');
  handlers.set('/to-metadata', redirect('https://169.254.169.254/latest/meta-data/'));
  await refused(fetchList(url('/to-metadata'), guarded()), 'address_refused');
  handlers.set('/to-http', redirect(`http://${HOST}:${port}/log-list.1`));
  await refused(fetchList(url('/to-http'), guarded()), 'redirect_refused');
  handlers.set('/no-location', (_q, r) => r.writeHead(301).end());
  await refused(fetchList(url('/no-location'), guarded()), 'redirect_refused');
});

void test('limits: the deadline covers the whole fetch; the body is capped while streaming', async () => {
  handlers.set('/hang', () => undefined); // never answers
  const t0 = Date.now();
  await refused(fetchList(url('/hang'), { ...guarded(), timeoutMs: 300 }), 'fetch_timeout');
  assert.ok(Date.now() - t0 < 5000);
  handlers.set('/slow-body', (_q, r) => {
    r.writeHead(200);
    r.write('logs/v0\n'); // then nothing
  });
  await refused(fetchList(url('/slow-body'), { ...guarded(), timeoutMs: 300 }), 'fetch_timeout');
  handlers.set('/big', (_q, r) => {
    r.writeHead(200); // chunked: no Content-Length
    const chunk = '#'.repeat(1023) + '\n';
    let n = 0;
    const more = (): void => {
      while (n < 64) {
        n++;
        if (!r.write(chunk)) break;
      }
      if (n < 64) r.once('drain', more);
      else r.end();
    };
    more();
  });
  await refused(fetchList(url('/big'), { ...guarded(), maxBytes: 10_000 }), 'list_too_large');
  assert.equal((await fetchList(url('/big'), { ...guarded(), maxBytes: 65_536 })).length, 65_536);
  handlers.set('/declared', (_q, r) => r.writeHead(200, { 'content-length': '99999' }).end('#'.repeat(99999)));
  await refused(fetchList(url('/declared'), { ...guarded(), maxBytes: 10_000 }), 'list_too_large', /99999 bytes/);
  handlers.set('/latin1', (_q, r) => r.writeHead(200).end(Buffer.from([0x6c, 0xff, 0x0a])));
  await refused(fetchList(url('/latin1'), guarded()), 'list_not_utf8');
});

void test('http:// only with --dev and only to loopback', async () => {
  const plain = createHttpServer((_q, r) => r.writeHead(200).end('logs/v0\n'));
  const p = await listenLoopback(plain);
  try {
    assert.equal(await fetchList(new URL(`http://127.0.0.1:${p}/l`), { dev: true }), 'logs/v0\n');
    assert.equal(
      await fetchList(new URL(`http://lists.local:${p}/l`), { dev: true, lookup: resolver({ 'lists.local': '127.0.0.1' }) }),
      'logs/v0\n',
    );
    await refused(
      fetchList(new URL(`http://lists.local:${p}/l`), { dev: true, lookup: resolver({ 'lists.local': '10.0.0.1' }) }),
      'address_refused',
    );
    await refused(fetchList(new URL(`http://127.0.0.1:${p}/l`), {}), 'address_refused');
  } finally {
    await new Promise((r) => plain.close(r));
  }
});

void test('role: a URL list imports over https; 404, timeout, oversize and a bad header keep the state; a URL failing at start does not stop start-up', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = new SyntheticLog('https-list.example/log', ed25519KeyFromSeed(seq(0x60)));
    let body = `logs/v0\nvkey ${log.vkey}\nqpd 100\n`;
    let mode: 'ok' | '404' | 'hang' | 'big' = 'ok';
    handlers.set('/role-list', (_q, r) => {
      if (mode === '404') r.writeHead(404).end();
      else if (mode === 'big') r.writeHead(200).end('#'.repeat(5000));
      else if (mode === 'ok') r.writeHead(200).end(body);
    });
    const src = `https://${HOST}:${port}/role-list?token=secret`;
    const label = `https://${HOST}:${port}/role-list`;
    // Start with the server failing: start-up goes on with nothing imported.
    mode = '404';
    const listFetch = { ...guarded(), timeoutMs: 300, maxBytes: 4096 };
    let h = await startCosign({ dir, logsLists: [src], listFetch });
    try {
      assert.equal(h.role.logs.current().size, 0);
      const s = h.role.lists.sources[0]!;
      assert.equal(s.label, label);
      mode = 'ok';
      assert.equal((await h.role.lists.read(s)).outcome, 'ok');
      assert.deepEqual([...h.role.logs.current().keys()], [log.origin]);
      assert.equal((await h.post(log.request(0, 2))).status, 200);
      const other = new SyntheticLog('later.example/log', ed25519KeyFromSeed(seq(0x61)));
      body = `logs/v0\nvkey ${other.vkey}\nqpd 100\n`;
      for (const [m, outcome] of [
        ['404', 'http_status'],
        ['hang', 'fetch_timeout'],
        ['big', 'list_too_large'],
      ] as const) {
        mode = m;
        assert.equal((await h.role.lists.read(s)).outcome, outcome);
        assert.deepEqual([...h.role.logs.current().keys()], [log.origin], `${m} keeps the state`);
      }
      mode = 'ok';
      body = `log/v0\nvkey ${other.vkey}\nqpd 100\n`;
      assert.equal((await h.role.lists.read(s)).outcome, 'invalid_log_list');
      assert.deepEqual([...h.role.logs.current().keys()], [log.origin]);
      const metrics = (await h.get('/metrics')).text;
      for (const outcome of ['http_status', 'fetch_timeout', 'list_too_large', 'invalid_log_list', 'ok']) {
        assert.match(
          metrics,
          new RegExp(`logs_list_fetches_total\\{source="${label.replace(/[.?]/g, '\\$&')}",outcome="${outcome}"\\} \\d`),
        );
      }
      assert.doesNotMatch(metrics, /secret/);
    } finally {
      await h.close();
    }
    // Restart with the URL down: the stored import still serves.
    mode = '404';
    h = await startCosign({ dir, logsLists: [src], listFetch });
    try {
      assert.deepEqual([...h.role.logs.current().keys()], [log.origin]);
      assert.equal((await h.post(log.request(2, 4))).status, 200);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});

// The OIDC provider thumbprint (SPEC §8): SHA-1 of the DER of the LAST certificate of the chain the
// host presents, lowercase hex without colons — checked against `openssl x509 -fingerprint -sha1`
// (research/ts-stack.md §4: X509Certificate.fingerprint is the colon-separated SHA-1) on
// certificates made with the openssl CLI at test time: from a chain file (--tls-cert) and from a
// live TLS handshake (--connect) with a local server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:tls';
import type { Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chainThumbprint, parseCertificateChain, normalizeThumbprint } from '../../src/federation/thumbprint.ts';
import { probePresentedChain } from '../../src/federation/tls-probe.ts';
import { FederationError } from '../../src/federation/errors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { makePki, opensslSha1, readText, runCli } from './_helpers.ts';
import type { Pki } from './_helpers.ts';

const HOST = 'bridge.test';
let tmp: { dir: string; cleanup: () => void };
let pki: Pki;
let chainFile: string;
const servers: Server[] = [];
/** The SNI names the test servers saw. */
const sni: string[] = [];

before(() => {
  tmp = tempDir('tb-thumb-');
  pki = makePki(tmp.dir, HOST);
  // a 2-certificate chain file as a server is configured with: leaf first, then its issuer
  chainFile = join(tmp.dir, 'chain.pem');
  writeFileSync(chainFile, readText(pki.leafPem) + readText(pki.interPem));
});

after(() => {
  for (const s of servers) s.close();
  tmp.cleanup();
});

function serve(certPem: string, keyFile: string): Promise<number> {
  const s = createServer(
    {
      cert: certPem,
      key: readFileSync(keyFile),
      SNICallback: (name, cb) => {
        sni.push(name);
        cb(null);
      },
    },
    (socket) => socket.end(),
  );
  servers.push(s);
  return new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => {
      resolve((s.address() as AddressInfo).port);
    }),
  );
}

void test("chain file: the thumbprint is openssl's SHA-1 fingerprint of the last certificate (lowercase, no colons)", () => {
  const expected = opensslSha1(pki.interPem);
  assert.match(expected, /^[0-9a-f]{40}$/);
  const t = chainThumbprint(parseCertificateChain(readText(chainFile), chainFile), Date.now());
  assert.equal(t.thumbprint, expected);
  assert.equal(t.certificates, 2);
  assert.deepEqual(t.warnings, []);
  assert.notEqual(t.thumbprint, opensslSha1(pki.leafPem)); // not the leaf (the legacy docs' mistake)
});

void test('self-signed: the certificate itself', () => {
  const t = chainThumbprint(parseCertificateChain(readText(pki.selfPem), 'self.pem'), Date.now());
  assert.equal(t.thumbprint, opensslSha1(pki.selfPem));
  assert.equal(t.certificates, 1);
});

void test('a chain out of order is warned about; a file without certificates is refused', () => {
  const t = chainThumbprint(parseCertificateChain(readText(pki.interPem) + readText(pki.leafPem), 'x'), Date.now());
  assert.equal(t.thumbprint, opensslSha1(pki.leafPem));
  assert.equal(t.warnings.length, 1);
  assert.match(t.warnings[0]!, /not issued by certificate 2/);
  assert.throws(
    () => parseCertificateChain(readText(pki.leafKey), 'key.pem'),
    (e: unknown) => e instanceof FederationError && e.code === 'certificate_unreadable',
  );
  // expiry is reported (a clock 10 days ahead)
  const late = chainThumbprint(parseCertificateChain(readText(chainFile), 'x'), Date.now() + 10 * 86400_000);
  assert.equal(late.warnings.filter((w) => w.includes('expired')).length, 2);
});

void test("--extra-thumbprint accepts openssl's colon form, any case; output is lowercase hex", () => {
  assert.equal(
    normalizeThumbprint('9E:99:A4:8A:99:60:B1:49:26:BB:7F:3B:02:E2:2D:A2:B0:AB:72:80'),
    '9e99a48a9960b14926bb7f3b02e22da2b0ab7280',
  );
  assert.throws(() => normalizeThumbprint('9e99a48a'), /40 hex/);
});

void test('--connect: the last certificate the server presents (leaf + intermediate → the intermediate), with SNI', async () => {
  const port = await serve(readText(pki.leafPem) + readText(pki.interPem), pki.leafKey);
  const probe = await probePresentedChain({ servername: HOST, host: '127.0.0.1', port });
  assert.equal(probe.chain.length, 2);
  assert.equal(chainThumbprint(probe.chain, Date.now()).thumbprint, opensslSha1(pki.interPem));
  assert.equal(probe.verified, false); // a private CA: IAM would rely on the thumbprint
  assert.ok(sni.length >= 2 && sni.every((n) => n === HOST), `SNI sent: ${sni.join(',')}`);
  // a server presenting leaf + intermediate + root: the root
  const port3 = await serve(readText(pki.leafPem) + readText(pki.interPem) + readText(pki.rootPem), pki.leafKey);
  const p3 = await probePresentedChain({ servername: HOST, host: '127.0.0.1', port: port3 });
  assert.equal(chainThumbprint(p3.chain, Date.now()).thumbprint, opensslSha1(pki.rootPem));
});

void test('aws-setup --connect --connect-to and --tls-cert give the same thumbprint as openssl', async () => {
  const port = await serve(readText(pki.selfPem), pki.selfKey);
  const common = [
    'aws-setup',
    '--issuer',
    `https://${HOST}`,
    '--subject',
    'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
    '--account-id',
    '123456789012',
  ];
  const live = await runCli([...common, '--connect', '--connect-to', `127.0.0.1:${port}`]);
  assert.equal(live.code, 0, live.stderr);
  const doc = JSON.parse(live.stdout) as { OpenIDConnectProvider: { ThumbprintList: string[] } };
  assert.deepEqual(doc.OpenIDConnectProvider.ThumbprintList, [opensslSha1(pki.selfPem)]);
  assert.match(live.stderr, /does not verify for bridge\.test/);

  const file = await runCli([...common, '--tls-cert', chainFile, '--extra-thumbprint', opensslSha1(pki.rootPem)]);
  assert.equal(file.code, 0, file.stderr);
  const fdoc = JSON.parse(file.stdout) as { OpenIDConnectProvider: { ThumbprintList: string[] } };
  assert.deepEqual(fdoc.OpenIDConnectProvider.ThumbprintList, [opensslSha1(pki.interPem), opensslSha1(pki.rootPem)]);

  const both = await runCli([...common, '--tls-cert', chainFile, '--connect']);
  assert.match(both.stderr, /exclude each other/);
  const refused = await runCli([...common, '--connect', '--connect-to', '127.0.0.1:1']);
  assert.equal(refused.code, 1);
  assert.ok(refused.error instanceof FederationError && refused.error.code === 'connect_failed');
});

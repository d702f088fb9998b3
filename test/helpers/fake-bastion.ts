/**
 * An in-process C2SP https-bastion for tests, doing what torchwood's litebastion does with a
 * backend: a TLS 1.3 server asking for a client certificate (any, self-signed), ALPN `bastion/0`,
 * the backend identified by the SHA-256 of its Ed25519 public key; then `http2.connect` over the
 * accepted socket, the bastion being the HTTP/2 *client* of the backend. Requests are sent with
 * `request(keyHash, …)` as the bastion would forward them (prefix cut, X-Forwarded-For set by the
 * caller). Its server certificate is a self-signed Ed25519 certificate for `localhost` and
 * 127.0.0.1, written with the project's DER writer; `ca` is its PEM for --bastion-ca.
 *
 * `tls` overrides make it a misbehaving peer (TLS 1.2 only, another ALPN or none).
 */
import http2 from 'node:http2';
import tls from 'node:tls';
import { createHash, generateKeyPairSync, sign, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  derBitString,
  derBoolean,
  derExplicit,
  derInteger,
  derOctetString,
  derOid,
  derSequence,
  derSet,
  derTlv,
  derUtcTime,
  derUtf8String,
} from '../../src/encoding/der.ts';
import { certificatePem } from '../../src/crypto/bastion-certificate.ts';
import { ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';

/** A self-signed Ed25519 server certificate for localhost / 127.0.0.1 (a CA for itself). */
export function localhostCertificate(): { key: KeyObject; keyPem: string; certPem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const ed25519 = derSequence(derOid('1.3.101.112'));
  const name = derSequence(derSet(derSequence(derOid('2.5.4.3'), derUtf8String('fake bastion'))));
  const san = derSequence(derTlv(0x82, new TextEncoder().encode('localhost')), derTlv(0x87, Uint8Array.of(127, 0, 0, 1)));
  const now = Date.now();
  const tbs = derSequence(
    derExplicit(0, derInteger(2)),
    derInteger(BigInt(`0x${createHash('sha256').update(String(now)).digest('hex').slice(0, 15)}`)),
    ed25519,
    name,
    derSequence(derUtcTime(now - 3_600_000), derUtcTime(now + 86_400_000)),
    name,
    derSequence(ed25519, derBitString(ed25519PublicKeyBytes(privateKey))),
    derExplicit(
      3,
      derSequence(
        derSequence(derOid('2.5.29.19'), derBoolean(true), derOctetString(derSequence(derBoolean(true)))),
        derSequence(derOid('2.5.29.17'), derOctetString(san)),
      ),
    ),
  );
  const der = derSequence(tbs, ed25519, derBitString(new Uint8Array(sign(null, tbs, privateKey))));
  return {
    key: privateKey,
    keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    certPem: certificatePem(der),
  };
}

export interface ForwardedRequest {
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Uint8Array;
}

export interface ForwardedAnswer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  /** the stream was reset (RST_STREAM) by the backend; its code */
  rstCode: number;
}

export interface FakeBastionOptions {
  port?: number;
  /** reuse a certificate (a restarted bastion keeps its identity) */
  cert?: { keyPem: string; certPem: string };
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  /** ALPN protocols offered; null = no ALPN at all */
  alpn?: string[] | null;
  /** the backend HTTP/2 client's settings */
  settings?: http2.Settings;
}

export interface FakeBastion {
  readonly port: number;
  /** `localhost:PORT` for --bastion */
  readonly addr: string;
  readonly ca: string;
  readonly cert: { keyPem: string; certPem: string };
  /** client certificates of the backends that connected, in order */
  readonly clientCerts: X509Certificate[];
  /** TLS sockets accepted so far (whatever their outcome) */
  accepted: number;
  backend(keyHash: string): http2.ClientHttp2Session | undefined;
  waitForBackend(keyHash: string, timeoutMs?: number): Promise<http2.ClientHttp2Session>;
  request(keyHash: string, req: ForwardedRequest): Promise<ForwardedAnswer>;
  /** Stop: destroy every backend connection and close the listener. */
  close(): Promise<void>;
}

export async function startFakeBastion(opts: FakeBastionOptions = {}): Promise<FakeBastion> {
  const cert = opts.cert ?? localhostCertificate();
  const backends = new Map<string, http2.ClientHttp2Session>();
  const sockets = new Set<tls.TLSSocket>();
  const clientCerts: X509Certificate[] = [];
  const alpn = opts.alpn === undefined ? ['bastion/0'] : opts.alpn;
  const server = tls.createServer({
    key: cert.keyPem,
    cert: cert.certPem,
    minVersion: opts.minVersion ?? 'TLSv1.3',
    ...(opts.maxVersion === undefined ? {} : { maxVersion: opts.maxVersion }),
    ...(alpn === null ? {} : { ALPNProtocols: alpn }),
    requestCert: true,
    rejectUnauthorized: false, // any client certificate: the key hash is the identity
  });
  const state = { accepted: 0 };
  server.on('tlsClientError', () => undefined);
  server.on('secureConnection', (socket) => {
    state.accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const peer = socket.getPeerX509Certificate();
    if (peer === undefined || peer.publicKey.asymmetricKeyType !== 'ed25519' || socket.alpnProtocol !== 'bastion/0') {
      socket.destroy();
      return;
    }
    clientCerts.push(peer);
    const keyHash = createHash('sha256').update(ed25519PublicKeyBytes(peer.publicKey)).digest('hex');
    const session = http2.connect('https://localhost', { createConnection: () => socket, settings: opts.settings ?? {} });
    session.on('error', () => undefined);
    const old = backends.get(keyHash);
    backends.set(keyHash, session);
    old?.close(); // litebastion replaces an older connection of the same backend
    session.once('close', () => {
      if (backends.get(keyHash) === session) backends.delete(keyHash);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const waitForBackend = async (keyHash: string, timeoutMs = 10_000): Promise<http2.ClientHttp2Session> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = backends.get(keyHash);
      if (s !== undefined && !s.closed && !s.destroyed) return s;
      if (Date.now() > until) throw new Error(`no backend ${keyHash.slice(0, 8)}… within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  return {
    port,
    addr: `localhost:${port}`,
    ca: cert.certPem,
    cert,
    clientCerts,
    get accepted() {
      return state.accepted;
    },
    set accepted(v: number) {
      state.accepted = v;
    },
    backend: (keyHash) => backends.get(keyHash),
    waitForBackend,
    request: async (keyHash, req) => {
      const session = await waitForBackend(keyHash);
      return new Promise<ForwardedAnswer>((resolve, reject) => {
        const stream = session.request({ ':method': req.method, ':path': req.path, ...req.headers }, { endStream: req.body === undefined });
        const chunks: Buffer[] = [];
        let status = 0;
        let headers: http2.IncomingHttpHeaders = {};
        stream.on('response', (h) => {
          status = Number(h[':status']);
          headers = h;
        });
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', () => undefined);
        stream.on('close', () => {
          if (status === 0) reject(new Error(`stream closed without an answer (code ${stream.rstCode})`));
          else resolve({ status, headers, body: Buffer.concat(chunks), rstCode: stream.rstCode });
        });
        if (req.body !== undefined) stream.end(req.body);
      });
    },
    close: async () => {
      for (const s of backends.values()) s.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

/**
 * `aws-setup --connect`: read the certificate chain a host presents in a live TLS handshake (with
 * SNI = the issuer host), for the thumbprint of its last certificate (SPEC §8).
 *
 * Two handshakes:
 *  1. with an empty trust store, so the chain is exactly what the server sent (with the default
 *     store, Node appends the root from its own store when the server omitted it — AWS's procedure
 *     takes the last certificate the server *presents*);
 *  2. with Node's default store, only to report whether the chain verifies for the host (a
 *     publicly trusted chain means IAM ignores the thumbprint; an unverified one means the
 *     thumbprint is what IAM trusts, so check it out of band).
 */
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { FederationError } from './errors.ts';

export interface PresentedChain {
  /** Leaf first, each issuer after it, as far as the server sent them. */
  chain: X509Certificate[];
  /** Whether the chain verified for the host against Node's default CA store. */
  verified: boolean;
  verifyError: string | null;
}

export interface ProbeTarget {
  /** SNI and certificate host name: the issuer host. */
  servername: string;
  /** Where to connect (default: servername). */
  host?: string;
  port?: number;
  timeoutMs?: number;
}

function handshake<T>(target: ProbeTarget, emptyStore: boolean, read: (s: TLSSocket) => T): Promise<T> {
  const host = target.host ?? target.servername;
  const port = target.port ?? 443;
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      servername: target.servername,
      rejectUnauthorized: false,
      ...(emptyStore ? { ca: [] } : {}),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new FederationError('connect_failed', `TLS handshake with ${host}:${port} timed out`));
    }, target.timeoutMs ?? 10_000);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      try {
        resolve(read(socket));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      } finally {
        socket.destroy();
      }
    });
    socket.once('error', (e: Error) => {
      clearTimeout(timer);
      reject(new FederationError('connect_failed', `TLS connection to ${host}:${port} (SNI ${target.servername}) failed: ${e.message}`));
    });
  });
}

/** What is read of a peer certificate; every member may be missing at runtime (no certificate, end of chain). */
interface PeerCert {
  raw?: Uint8Array;
  fingerprint256?: string;
  issuerCertificate?: PeerCert;
}

function presented(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let c: PeerCert | undefined = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (c?.raw !== undefined && c.fingerprint256 !== undefined && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    chain.push(new X509Certificate(Buffer.from(c.raw)));
    c = c.issuerCertificate;
  }
  if (chain.length === 0) throw new FederationError('connect_failed', 'the server presented no certificate');
  return chain;
}

export async function probePresentedChain(target: ProbeTarget): Promise<PresentedChain> {
  const chain = await handshake(target, true, presented);
  const verdict = await handshake(target, false, (s) => ({
    verified: s.authorized,
    verifyError: s.authorized ? null : String(s.authorizationError),
  }));
  return { chain, ...verdict };
}

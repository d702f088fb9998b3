/**
 * One backend connection to one bastion (C2SP https-bastion v1.0.0-rc.1; SPEC §5.6).
 *
 *   dial HOST:PORT with TLS 1.3 only (min = max), ALPN `bastion/0`, SNI and certificate checks on
 *   HOST (the default roots, or --bastion-ca instead), and a client certificate built at this
 *   connect from the bastion key (src/crypto/bastion-certificate.ts);
 *   anything but `bastion/0` negotiated → close;
 *   then be the HTTP/2 server on that socket (`http2.performServerHandshake`), every stream served
 *   by the node's app (src/server/http2.ts); PINGs are answered by the HTTP/2 stack; after 15 s
 *   without a frame from the bastion we send a PING and drop the connection when it is not
 *   answered within 15 s;
 *   after a failed attempt or a lost connection, dial again on the ReconnectSchedule.
 *
 * A bastion drops a backend that does not answer its own PINGs; it replaces an older connection of
 * the same key with a newer one, so each replica needs its own bastion key.
 */
import http2 from 'node:http2';
import tls from 'node:tls';
import type { KeyObject } from 'node:crypto';
import type { ServerHttp2Session } from 'node:http2';
import { bastionClientCertificate, certificatePem } from '../crypto/bastion-certificate.ts';
import { ed25519PrivateKeyToPem } from '../crypto/ed25519.ts';
import { http2SessionSettings, serveHttp2Session } from '../server/http2.ts';
import type { App } from '../server/options.ts';
import type { BastionAddress } from './address.ts';
import type { BastionMetrics, ConnectOutcome } from './metrics.ts';
import { ReconnectSchedule } from './reconnect.ts';
import { BASTION_ALPN, BASTION_SERVING } from './serving.ts';

/** The logger calls a connection makes (a pino logger fits). */
export interface BastionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface BastionTiming {
  /** silence after which we PING the bastion (15 s) */
  readonly pingAfterMs: number;
  /** how long the PING may stay unanswered (15 s) */
  readonly pingTimeoutMs: number;
  /** TCP + TLS handshake (10 s) */
  readonly connectTimeoutMs: number;
  /** the reconnect delays (default RECONNECT_DELAYS_MS, then RECONNECT_STEADY_MS) */
  readonly delays?: readonly number[];
  readonly steadyMs?: number;
}

export const DEFAULT_TIMING: BastionTiming = { pingAfterMs: 15_000, pingTimeoutMs: 15_000, connectTimeoutMs: 10_000 };

export interface BastionConnectionOptions {
  readonly address: BastionAddress;
  /** the bastion key (Ed25519): the client certificate's key */
  readonly key: KeyObject;
  /** PEM roots that replace the default ones (--bastion-ca) */
  readonly ca?: string | undefined;
  readonly app: App;
  readonly metrics: BastionMetrics;
  readonly log?: BastionLogger | undefined;
  readonly timing?: Partial<BastionTiming> | undefined;
  /** called whenever `connected` changes */
  readonly onChange?: (() => void) | undefined;
  /** milliseconds since the epoch, for the certificate's validity (default Date.now) */
  readonly now?: (() => number) | undefined;
}

export class BastionConnection {
  readonly addr: string;
  private readonly opts: BastionConnectionOptions;
  private readonly timing: BastionTiming;
  private readonly schedule: ReconnectSchedule;
  private readonly keyPem: string;
  private socket: tls.TLSSocket | null = null;
  private session: ServerHttp2Session | null = null;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private upSince = 0;
  private stopped = false;
  /** true while the HTTP/2 session on the bastion connection is up */
  connected = false;
  /** connections established so far */
  connects = 0;
  /** PINGs sent on the current connection (after silences) */
  pings = 0;
  /** resolved when the first connection is up (the CLI's `serving via bastion` line) */
  readonly firstConnected: Promise<void>;
  private resolveFirst: () => void = () => undefined;

  constructor(opts: BastionConnectionOptions) {
    this.opts = opts;
    this.addr = opts.address.addr;
    this.timing = { ...DEFAULT_TIMING, ...opts.timing };
    this.schedule = new ReconnectSchedule(this.timing.delays, this.timing.steadyMs);
    this.keyPem = ed25519PrivateKeyToPem(opts.key);
    opts.metrics.connected.set({ addr: this.addr }, 0);
    this.firstConnected = new Promise((resolve) => {
      this.resolveFirst = resolve;
    });
  }

  start(): void {
    this.dial();
  }

  private count(outcome: ConnectOutcome): void {
    this.opts.metrics.connects.inc({ addr: this.addr, outcome });
  }

  private setConnected(v: boolean): void {
    if (this.connected === v) return;
    this.connected = v;
    this.opts.metrics.connected.set({ addr: this.addr }, v ? 1 : 0);
    this.opts.onChange?.();
  }

  private later(): void {
    if (this.stopped) return;
    const delay = this.schedule.next();
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.dial();
    }, delay);
  }

  private dial(): void {
    if (this.stopped) return;
    const { host, port } = this.opts.address;
    const now = (this.opts.now ?? Date.now)();
    const socket = tls.connect({
      host,
      port,
      // SNI and the certificate check use `host` (Node sends no SNI for an IP address).
      minVersion: 'TLSv1.3',
      maxVersion: 'TLSv1.3',
      ALPNProtocols: [BASTION_ALPN],
      key: this.keyPem,
      cert: certificatePem(bastionClientCertificate(this.opts.key, now)),
      ...(this.opts.ca === undefined ? {} : { ca: this.opts.ca }),
    });
    this.socket = socket;
    let tcp = false;
    let settled = false;
    const fail = (outcome: ConnectOutcome, reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (this.socket === socket) this.socket = null;
      if (this.stopped) return;
      this.count(outcome);
      this.opts.log?.warn({ bastion: this.addr, outcome, reason }, 'bastion: connection attempt failed');
      this.later();
    };
    const timer = setTimeout(() => {
      fail('timeout', `no TLS connection within ${this.timing.connectTimeoutMs} ms`);
    }, this.timing.connectTimeoutMs);
    socket.once('connect', () => {
      tcp = true;
    });
    socket.on('error', (e: Error & { code?: string }) => {
      fail(tcp ? 'tls_error' : 'connect_error', e.code === undefined ? e.message : `${e.code}: ${e.message}`);
    });
    socket.once('close', () => {
      fail(tcp ? 'tls_error' : 'connect_error', 'connection closed during the handshake');
    });
    socket.once('secureConnect', () => {
      if (settled) return;
      if (socket.alpnProtocol !== BASTION_ALPN) {
        fail('alpn_mismatch', `the peer negotiated ${JSON.stringify(socket.alpnProtocol)} instead of ${BASTION_ALPN}`);
        return;
      }
      settled = true;
      clearTimeout(timer);
      this.count('ok');
      try {
        this.serve(socket);
      } catch (e) {
        this.opts.log?.warn({ bastion: this.addr, err: (e as Error).message }, 'bastion: HTTP/2 session could not start');
        socket.destroy();
        this.later();
      }
    });
  }

  private serve(socket: tls.TLSSocket): void {
    const app = this.opts.app;
    const session = http2.performServerHandshake(socket, { settings: http2SessionSettings(app) });
    this.session = session;
    this.upSince = performance.now();
    this.connects++;
    serveHttp2Session(app, session, BASTION_SERVING);
    let probe: ReturnType<typeof setTimeout> | undefined;
    this.pings = 0;
    // Node refreshes the session timer on frames it reads (a PING ACK excepted) and writes; once
    // fired, the timer is armed again by hand after each answered PING.
    const arm = (): void => {
      session.setTimeout(this.timing.pingAfterMs, onSilence);
    };
    const onSilence = (): void => {
      if (probe !== undefined || session.destroyed) return;
      probe = setTimeout(() => {
        this.opts.log?.warn({ bastion: this.addr, ms: this.timing.pingTimeoutMs }, 'bastion: PING unanswered; dropping the connection');
        session.destroy();
        socket.destroy();
      }, this.timing.pingTimeoutMs);
      this.pings++;
      const sent = session.ping((err) => {
        clearTimeout(probe);
        probe = undefined;
        if (err !== null) {
          if (!session.destroyed) session.destroy();
          return;
        }
        if (!session.destroyed) arm();
      });
      if (!sent) {
        clearTimeout(probe);
        probe = undefined;
        session.destroy();
      }
    };
    arm();
    session.on('error', (e: Error & { code?: string }) => {
      this.opts.log?.warn({ bastion: this.addr, err: e.code ?? e.message }, 'bastion: HTTP/2 session error');
    });
    socket.on('error', () => undefined); // reported by the session's close below
    session.once('close', () => {
      clearTimeout(probe);
      socket.destroy();
      if (this.session === session) this.session = null;
      if (this.socket === socket) this.socket = null;
      const upMs = performance.now() - this.upSince;
      this.setConnected(false);
      if (this.stopped) return;
      this.schedule.ended(upMs);
      this.opts.log?.warn({ bastion: this.addr, up_s: Math.round(upMs / 1000) }, 'bastion: connection lost; reconnecting');
      this.later();
    });
    this.opts.log?.info({ bastion: this.addr }, 'bastion: connected; serving over HTTP/2');
    this.setConnected(true);
    this.resolveFirst();
  }

  /** Stop reconnecting; send GOAWAY and let open streams finish for up to `timeoutMs`, then cut. */
  async close(timeoutMs = 5_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    const session = this.session;
    const socket = this.socket;
    if (session !== null && !session.destroyed) {
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => {
          session.destroy();
        }, timeoutMs);
        session.once('close', () => {
          clearTimeout(cut);
          resolve();
        });
        session.close();
      });
    }
    socket?.destroy();
    this.setConnected(false);
  }
}

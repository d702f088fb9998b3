/**
 * An Ed25519 key held by an ssh-agent (SPEC §1.1), over the OpenSSH agent protocol
 * (draft-miller-ssh-agent) on a Unix socket: the reference's `socket`, else `SSH_AUTH_SOCK`.
 *
 *   frame             = uint32 len ‖ payload, len ≤ 262 144
 *   REQUEST_IDENTITIES  (11)                                   → IDENTITIES_ANSWER (12)
 *                       uint32 n ‖ n × (string blob ‖ string comment)
 *   SIGN_REQUEST        (13) string blob ‖ string data ‖ uint32 0 → SIGN_RESPONSE (14)
 *                       string(string "ssh-ed25519" ‖ string sig[64])
 *   FAILURE             (5)
 *
 * One connection, one request in flight (requests queue in order). Any protocol surprise closes
 * the connection and fails the request; ManagedSigner turns that into `signer_unavailable` and
 * recovers by reconnecting.
 */
import { createConnection, type Socket } from 'node:net';
import { KeyRefError } from './errors.ts';
import { SSH_ED25519, SshReader, ed25519KeyFromBlob, sshFingerprint, sshString, sshUint32 } from './openssh.ts';
import { BackendError, type SignerBackend } from './signer.ts';
import { redactKeyRef, type SshAgentKeyRef } from './ref.ts';

export const SSH_AGENT_FAILURE = 5;
export const SSH_AGENTC_REQUEST_IDENTITIES = 11;
export const SSH_AGENT_IDENTITIES_ANSWER = 12;
export const SSH_AGENTC_SIGN_REQUEST = 13;
export const SSH_AGENT_SIGN_RESPONSE = 14;
export const MAX_AGENT_FRAME = 262_144;

export interface AgentIdentity {
  readonly blob: Uint8Array;
  readonly comment: string;
}

/** One agent connection; requests are serialized (one in flight). */
export class AgentConnection {
  private socket: Socket | undefined;
  private connecting: Promise<Socket> | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private waiter: { resolve: (b: Buffer) => void; reject: (e: Error) => void } | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  private readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** Send one request and read its reply, after the requests before it. */
  request(payload: Buffer): Promise<Buffer> {
    const run = this.chain.then(
      () => this.roundTrip(payload),
      () => this.roundTrip(payload),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    this.connecting = undefined;
    this.buf = Buffer.alloc(0);
    s?.destroy();
    this.fail(new BackendError('agent_disconnected', 'connection to the agent closed'));
  }

  private fail(e: Error): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(e);
  }

  private connect(): Promise<Socket> {
    if (this.socket !== undefined) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<Socket>((resolve, reject) => {
      const s = createConnection(this.path);
      const onError = (e: NodeJS.ErrnoException): void => {
        this.connecting = undefined;
        reject(new BackendError('agent_unreachable', `cannot connect to the agent socket: ${e.code ?? e.message}`));
      };
      s.once('error', onError);
      s.once('connect', () => {
        s.off('error', onError);
        this.socket = s;
        this.connecting = undefined;
        s.on('data', (d: Buffer) => {
          this.onData(d);
        });
        s.on('error', () => undefined);
        s.on('close', () => {
          if (this.socket === s) {
            this.socket = undefined;
            this.buf = Buffer.alloc(0);
            this.fail(new BackendError('agent_disconnected', 'the agent closed the connection'));
          }
        });
        resolve(s);
      });
    });
    return this.connecting;
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    if (this.buf.length < 4) return;
    const len = this.buf.readUInt32BE(0);
    if (len === 0 || len > MAX_AGENT_FRAME) {
      this.fail(new BackendError('agent_protocol', `agent frame of ${len} bytes`));
      this.close();
      return;
    }
    if (this.buf.length < 4 + len) return;
    const frame = this.buf.subarray(4, 4 + len);
    const extra = this.buf.length - 4 - len;
    this.buf = Buffer.alloc(0);
    const w = this.waiter;
    this.waiter = undefined;
    if (w === undefined || extra !== 0) {
      // An unsolicited frame, or more than one answer: the stream is out of step.
      w?.reject(new BackendError('agent_protocol', 'unexpected data from the agent'));
      this.close();
      return;
    }
    w.resolve(Buffer.from(frame));
  }

  private async roundTrip(payload: Buffer): Promise<Buffer> {
    const s = await this.connect();
    return new Promise<Buffer>((resolve, reject) => {
      this.waiter = { resolve, reject };
      s.write(Buffer.concat([sshUint32(payload.length), payload]));
    });
  }
}

/** Parse an IDENTITIES_ANSWER payload (type byte included). */
export function parseIdentities(reply: Uint8Array): AgentIdentity[] {
  const r = new SshReader(reply);
  const type = r.byte();
  if (type === SSH_AGENT_FAILURE) throw new BackendError('agent_failure', 'the agent answered FAILURE to REQUEST_IDENTITIES');
  if (type !== SSH_AGENT_IDENTITIES_ANSWER)
    throw new BackendError('agent_protocol', `the agent answered type ${type} to REQUEST_IDENTITIES`);
  const n = r.uint32();
  const out: AgentIdentity[] = [];
  for (let i = 0; i < n; i++) {
    const blob = Uint8Array.from(r.string());
    const comment = Buffer.from(r.string()).toString('utf8');
    out.push({ blob, comment });
  }
  if (!r.done) throw new BackendError('agent_protocol', 'trailing bytes after the identities');
  return out;
}

/** Parse a SIGN_RESPONSE payload to the 64-byte Ed25519 signature; anything else fails. */
export function parseSignResponse(reply: Uint8Array): Uint8Array {
  try {
    const r = new SshReader(reply);
    const type = r.byte();
    if (type === SSH_AGENT_FAILURE) throw new BackendError('agent_failure', 'the agent answered FAILURE to SIGN_REQUEST');
    if (type !== SSH_AGENT_SIGN_RESPONSE) throw new BackendError('agent_protocol', `the agent answered type ${type} to SIGN_REQUEST`);
    const inner = new SshReader(r.string());
    if (!r.done) throw new BackendError('agent_protocol', 'trailing bytes after the signature');
    const alg = Buffer.from(inner.string()).toString('latin1');
    const sig = inner.string();
    if (alg !== SSH_ED25519 || sig.length !== 64 || !inner.done) {
      throw new BackendError('agent_protocol', `the agent returned a ${alg} signature of ${sig.length} bytes`);
    }
    return Uint8Array.from(sig);
  } catch (e) {
    if (e instanceof BackendError) throw e;
    throw new BackendError('agent_protocol', `malformed SIGN_RESPONSE: ${(e as Error).message}`);
  }
}

/** The signer backend for `ssh-agent:SHA256:…` references. */
export class SshAgentBackend implements SignerBackend {
  readonly algorithm = 'ed25519' as const;
  readonly external = true;
  readonly ref: string;
  private readonly conn: AgentConnection;
  private readonly fingerprint: string;
  private blob: Uint8Array | undefined;

  constructor(ref: SshAgentKeyRef, refText: string, env: NodeJS.ProcessEnv = process.env) {
    this.ref = redactKeyRef(refText);
    const socket = ref.socket ?? env.SSH_AUTH_SOCK;
    if (socket === undefined || socket === '') {
      throw new KeyRefError('key_ref_invalid', `key reference ${this.ref}: no ?socket= in the reference and SSH_AUTH_SOCK is not set`);
    }
    this.conn = new AgentConnection(socket);
    this.fingerprint = ref.fingerprint;
  }

  async open(): Promise<Uint8Array> {
    const ids = parseIdentities(await this.conn.request(Buffer.from([SSH_AGENTC_REQUEST_IDENTITIES])));
    for (const id of ids) {
      const key = ed25519KeyFromBlob(id.blob);
      if (key !== undefined && sshFingerprint(id.blob) === this.fingerprint) {
        this.blob = id.blob;
        return key;
      }
    }
    throw new KeyRefError(
      'key_not_found',
      `the agent holds no ssh-ed25519 key with fingerprint ${this.fingerprint} (${ids.length} identities)`,
    );
  }

  async sign(msg: Uint8Array): Promise<Uint8Array> {
    if (this.blob === undefined) await this.open();
    const req = Buffer.concat([Buffer.from([SSH_AGENTC_SIGN_REQUEST]), sshString(this.blob!), sshString(msg), sshUint32(0)]);
    return parseSignResponse(await this.conn.request(req));
  }

  reset(): Promise<void> {
    this.conn.close();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.conn.close();
    return Promise.resolve();
  }
}

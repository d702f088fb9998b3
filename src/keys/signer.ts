/**
 * Signers (SPEC §1.1): one async interface for a key in a file, in an ssh-agent or on a PKCS#11
 * token, and the availability rules every external signer follows.
 *
 * A `SignerBackend` is the transport (file, agent, token): it finds the key, reports its public key
 * and makes raw signatures. `ManagedSigner` wraps a backend and owns everything else:
 *   - every signature is verified with the product's strict verifier before it is returned
 *     (P-256 after normalization to low S); a bad one is `signer_bad_signature` and makes the
 *     signer unavailable;
 *   - the public key stays the one bound at start (`key_changed`: unavailable until the bound key
 *     is back);
 *   - a request waits at most `timeoutMs`; 3 consecutive timeouts make the signer unavailable;
 *   - at most `maxPending` requests wait; beyond that `overloaded`;
 *   - while unavailable every request fails fast with `signer_unavailable`, and a recovery loop
 *     (0.5, 1, 2, 5 s, then every 5 s) resets the backend, re-reads the public key and verifies a
 *     probe signature; success logs `signer_recovered`.
 * No backend error escapes as anything but a SignerError; nothing here ends the process.
 */
import { KeyObject, randomBytes } from 'node:crypto';
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { verifyP256 } from '../crypto/p256.ts';
import { P256_HALF_N, P256_N, bigIntFromBytes, bytes32FromBigInt } from '../crypto/p256-strict.ts';
import { SignerError } from './errors.ts';

export type SignerAlgorithm = 'ed25519' | 'p256';
export type SignerState = 'ok' | 'unavailable';

/** One entry of `/health` `signers` (SPEC §1.1). */
export interface SignerStatus {
  /** `witness`, `witness_next`, `cosign:<vkey>`, `kel` or `bridge:<kid>`. */
  readonly key: string;
  /** The reference with socket and pin-source redacted. */
  readonly ref: string;
  readonly state: SignerState;
  /** RFC 3339 UTC: when the state last changed. */
  readonly since: string;
  /** The code of the last failure, or null. */
  readonly last_error: string | null;
}

/** What the rest of the product signs with. */
export interface Signer {
  readonly algorithm: SignerAlgorithm;
  /** Ed25519: 32 bytes; P-256: 33-byte compressed SEC1. */
  readonly publicKey: Uint8Array;
  /** True for a key outside the process (agent, token): callers keep its latency off hot paths. */
  readonly external: boolean;
  /** Ed25519: the signature over msg; P-256: r ‖ s (low S) of ECDSA over SHA-256(msg). */
  sign(msg: Uint8Array): Promise<Uint8Array>;
  isAvailable(): boolean;
  status(): SignerStatus;
  close(): Promise<void>;
}

/** A failure a backend reports; `code` names it in `/health` `last_error` (e.g. `CKR_DEVICE_REMOVED`). */
export class BackendError extends Error {
  readonly code: string;
  /** True when the backend can fix it itself first (PKCS#11 CKR_USER_NOT_LOGGED_IN: re-login). */
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface SignerBackend {
  readonly algorithm: SignerAlgorithm;
  readonly external: boolean;
  /** Redacted reference for logs and `/health`. */
  readonly ref: string;
  /** Connect, find the key and return its public key (throws BackendError or KeyRefError). */
  open(): Promise<Uint8Array>;
  /** A raw signature (P-256: r ‖ s, any S). Throws on failure. */
  sign(msg: Uint8Array): Promise<Uint8Array>;
  /** Drop connections or sessions before a recovery attempt. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface SignerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SignerEvents {
  /** Called once per request with its outcome and latency (metrics). */
  request?(key: string, outcome: 'ok' | 'unavailable' | 'bad_signature' | 'timeout' | 'overloaded', seconds: number): void;
  stateChanged?(key: string, state: SignerState): void;
}

export interface ManagedSignerOptions {
  /** The `/health` key name (`witness`, `cosign:<vkey>`, …), or a function of the public key. */
  readonly key: string | ((publicKey: Uint8Array) => string);
  /** `--signer-timeout` (2 s). */
  readonly timeoutMs?: number;
  /** `--signer-max-pending` (256). */
  readonly maxPending?: number;
  /** `--signer-start-timeout` (30 s). */
  readonly startTimeoutMs?: number;
  /** Recovery delays; the last repeats (SPEC: 0.5, 1, 2, 5 s, then every 5 s). */
  readonly recoveryDelaysMs?: readonly number[];
  /** Start-up retry interval (1 s). */
  readonly startRetryMs?: number;
  readonly log?: SignerLog;
  readonly events?: SignerEvents;
}

export const PROBE_PREFIX = 'anchor-witness/key-probe/v1\n';

/** `"anchor-witness/key-probe/v1\n" ‖ 64 hex random ‖ "\n"`: never stored or sent. */
export function probeMessage(): Uint8Array {
  return Buffer.from(`${PROBE_PREFIX}${randomBytes(32).toString('hex')}\n`, 'latin1');
}

/** r ‖ s with s replaced by n − s when s > (n−1)/2. */
export function normalizeLowS(sig: Uint8Array): Uint8Array {
  if (sig.length !== 64) return sig;
  const s = bigIntFromBytes(sig, 32, 64);
  if (s <= P256_HALF_N) return sig;
  const out = Uint8Array.from(sig);
  out.set(bytes32FromBigInt(P256_N - s), 32);
  return out;
}

export function verifySignature(algorithm: SignerAlgorithm, publicKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  return algorithm === 'ed25519' ? verifyEd25519(publicKey, msg, sig) : verifyP256(publicKey, msg, sig);
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));
const errorCode = (e: unknown): string =>
  e instanceof BackendError || e instanceof SignerError
    ? e.code
    : e instanceof Error && 'code' in e && typeof e.code === 'string'
      ? e.code
      : 'signer_error';
/** A wait that does not keep the process alive (recovery runs beside a serving node). */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
/** A wait that does: at start-up nothing else holds the event loop, and an unref'd retry let the process exit 0. */
const startSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

class Timeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Timeout('timeout'));
    }, ms);
  });
  return Promise.race([p, t]).finally(() => {
    clearTimeout(timer);
  });
}

export class ManagedSigner implements Signer {
  readonly algorithm: SignerAlgorithm;
  readonly external: boolean;
  readonly publicKey: Uint8Array;
  private readonly backend: SignerBackend;
  private readonly key: string;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly delays: readonly number[];
  private readonly log: SignerLog | undefined;
  private readonly events: SignerEvents | undefined;
  private state: SignerState = 'ok';
  private since = new Date();
  private lastError: string | null = null;
  private pending = 0;
  private timeouts = 0;
  private recovering = false;
  private closed = false;

  private constructor(backend: SignerBackend, publicKey: Uint8Array, opts: ManagedSignerOptions) {
    this.backend = backend;
    this.algorithm = backend.algorithm;
    this.external = backend.external;
    this.publicKey = publicKey;
    this.key = typeof opts.key === 'string' ? opts.key : opts.key(publicKey);
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxPending = opts.maxPending ?? 256;
    this.delays = opts.recoveryDelaysMs ?? [500, 1000, 2000, 5000];
    this.log = opts.log;
    this.events = opts.events;
  }

  /**
   * Open the backend, read the public key and verify one probe signature; retried every second
   * for `startTimeoutMs`, then `signer_unavailable` (start-up fails). Errors that retrying cannot
   * fix (a bad reference, no pkcs11js, an unsafe module, key_not_found/key_ambiguous/unsupported
   * after the timeout) keep their own message.
   */
  static async start(backend: SignerBackend, opts: ManagedSignerOptions): Promise<ManagedSigner> {
    const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
    let last: unknown;
    for (;;) {
      try {
        const publicKey = await backend.open();
        await probe(backend, publicKey);
        return new ManagedSigner(backend, publicKey, opts);
      } catch (e) {
        last = e;
        if (isPermanent(e)) {
          await backend.close().catch(() => undefined);
          throw e;
        }
        await backend.reset().catch(() => undefined);
      }
      if (Date.now() >= deadline) break;
      await startSleep(Math.min(opts.startRetryMs ?? 1000, Math.max(0, deadline - Date.now())));
    }
    await backend.close().catch(() => undefined);
    const why = last instanceof Error ? last.message : String(last);
    throw new SignerError('signer_unavailable', `key ${backend.ref}: unavailable at start: ${why}`);
  }

  isAvailable(): boolean {
    return this.state === 'ok';
  }

  status(): SignerStatus {
    return {
      key: this.key,
      ref: this.backend.ref,
      state: this.state,
      since: this.since.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      last_error: this.lastError,
    };
  }

  async sign(msg: Uint8Array): Promise<Uint8Array> {
    const started = performance.now();
    const done = (outcome: Parameters<NonNullable<SignerEvents['request']>>[1]): void =>
      this.events?.request?.(this.key, outcome, (performance.now() - started) / 1000);
    if (this.state !== 'ok') {
      done('unavailable');
      throw this.unavailableError();
    }
    if (this.pending >= this.maxPending) {
      done('overloaded');
      throw new SignerError('overloaded', `${this.key} key: ${this.maxPending} signature requests are already waiting`);
    }
    this.pending++;
    let raw: Uint8Array;
    try {
      raw = await withTimeout(this.backend.sign(msg), this.timeoutMs);
    } catch (e) {
      if (e instanceof Timeout) {
        this.timeouts++;
        done('timeout');
        if (this.timeouts >= 3) this.markUnavailable('signer_timeout');
        throw new SignerError('signer_unavailable', `${this.key} key: the signer did not answer within ${this.timeoutMs} ms`);
      }
      done('unavailable');
      this.markUnavailable(errorCode(e), e);
      throw this.unavailableError();
    } finally {
      this.pending--;
    }
    this.timeouts = 0;
    const sig = this.algorithm === 'p256' ? normalizeLowS(raw) : raw;
    if (!verifySignature(this.algorithm, this.publicKey, msg, sig)) {
      done('bad_signature');
      this.markUnavailable('signer_bad_signature');
      throw new SignerError(
        'signer_unavailable',
        `${this.key} key: the signer returned a signature that does not verify (signer_bad_signature)`,
      );
    }
    done('ok');
    return sig;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.backend.close().catch(() => undefined);
  }

  private unavailableError(): SignerError {
    return new SignerError('signer_unavailable', `${this.key} key is unavailable (${this.lastError ?? 'signer_unavailable'}); retry later`);
  }

  private setState(state: SignerState): void {
    if (this.state === state) return;
    this.state = state;
    this.since = new Date();
    this.events?.stateChanged?.(this.key, state);
  }

  private markUnavailable(code: string, cause?: unknown): void {
    this.lastError = code;
    if (this.state === 'ok') {
      this.log?.warn(
        { key: this.key, ref: this.backend.ref, code, err: cause instanceof Error ? cause.message : undefined },
        'signer_unavailable',
      );
    }
    this.setState('unavailable');
    if (!this.recovering && !this.closed) {
      this.recovering = true;
      void this.recover();
    }
  }

  private isClosed(): boolean {
    return this.closed;
  }

  private async recover(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      await sleep(this.delays[Math.min(attempt, this.delays.length - 1)]!);
      // close() may have run during the sleep
      if (this.isClosed()) break;
      try {
        await this.backend.reset();
        const publicKey = await withTimeout(this.backend.open(), this.timeoutMs * 2);
        if (!sameBytes(publicKey, this.publicKey)) {
          this.lastError = 'key_changed';
          continue;
        }
        await withTimeout(probe(this.backend, this.publicKey), this.timeoutMs * 2);
        this.timeouts = 0;
        this.setState('ok');
        this.log?.info({ key: this.key, ref: this.backend.ref, attempts: attempt + 1 }, 'signer_recovered');
        break;
      } catch (e) {
        this.lastError = e instanceof Timeout ? 'signer_timeout' : errorCode(e);
      }
    }
    this.recovering = false;
  }
}

function isPermanent(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  return (
    code === 'key_ref_invalid' ||
    code === 'pkcs11_unavailable' ||
    code === 'pkcs11_module_unsafe' ||
    code === 'pin_file_invalid' ||
    code === 'key_unsupported' ||
    code === 'key_ambiguous'
  );
}

async function probe(backend: SignerBackend, publicKey: Uint8Array): Promise<void> {
  const msg = probeMessage();
  const raw = await backend.sign(msg);
  const sig = backend.algorithm === 'p256' ? normalizeLowS(raw) : raw;
  if (!verifySignature(backend.algorithm, publicKey, msg, sig)) {
    throw new SignerError('signer_bad_signature', `${backend.ref}: the probe signature does not verify under the key's public key`);
  }
}

/** A Signer (a key outside the process) rather than a KeyObject. */
export function isSigner(k: KeyObject | Signer): k is Signer {
  return !(k instanceof KeyObject);
}

/**
 * The bridge's serving view of its key directory (key-dir.ts): the active signing key and the
 * published JWKS, refreshed at start, on SIGHUP and every 60 s; a failed refresh keeps the previous
 * one. SPEC §1.1: it opens the token signer of the active key only (a `ref`/`jwk` entry on a
 * PKCS#11 token) and closes it once it is not. Times: unix seconds.
 */
import { BridgeConfigError } from './errors.ts';
import { KeyDir } from './key-dir.ts';
import { publicationOrder } from './keyring.ts';
import type { KeyEntry } from './keyring.ts';
import type { BridgeSigners } from './keys-external.ts';
import type { Signer } from '../keys/signer.ts';
import type { PublicJwk, SigningAlg, SigningKey } from './signing.ts';

export interface KeyringOptions {
  /** Algorithm of the key created on first start. */
  alg: SigningAlg;
  maxTtl: number;
  /** Create the first key when the directory is empty (serve); false for read-only use. */
  create: boolean;
  /** Opens the active key's token signer (SPEC §1.1); without it a token key cannot be active. */
  signers?: BridgeSigners;
}

interface Snapshot {
  readonly entries: readonly KeyEntry[];
  readonly keys: ReadonlyMap<string, SigningKey>;
  readonly active: SigningKey;
  readonly jwks: { keys: PublicJwk[] };
}

export class SigningKeyring {
  readonly keyDir: KeyDir;
  private readonly opts: KeyringOptions;
  private snap: Snapshot;
  private timer: NodeJS.Timeout | undefined;
  private onHup: (() => void) | undefined;

  private constructor(keyDir: KeyDir, opts: KeyringOptions, snap: Snapshot) {
    this.keyDir = keyDir;
    this.opts = opts;
    this.snap = snap;
  }

  /** Open (and on first start create) the key directory, promote a due key, and load every key. */
  static async open(dir: string, opts: KeyringOptions, now: number): Promise<SigningKeyring> {
    const keyDir = new KeyDir(dir);
    if (opts.create) {
      keyDir.ensure();
      await keyDir.ensureFirstKey(now, opts.alg);
    }
    const snap = await SigningKeyring.load(keyDir, opts, now, new Map());
    return new SigningKeyring(keyDir, opts, snap);
  }

  private static async load(keyDir: KeyDir, opts: KeyringOptions, now: number, cache: ReadonlyMap<string, SigningKey>): Promise<Snapshot> {
    const entries = publicationOrder(await keyDir.promote(now, opts.maxTtl));
    const activeEntry = entries.find((e) => e.state === 'active');
    if (activeEntry === undefined)
      throw new BridgeConfigError(
        'key_dir_invalid',
        `${keyDir.jsonPath} has no active key; run: token-bridge keys rotate --key-dir ${keyDir.dir}`,
      );
    const keys = new Map<string, SigningKey>();
    const opened: Signer[] = [];
    try {
      for (const e of entries) {
        const cached = cache.get(e.kid);
        // A token key signs only while active: its signer is opened then (and reused), never for the others.
        const signs = e.ref !== undefined && e.state === 'active';
        if (cached !== undefined && (e.ref === undefined || signs === (cached.privateKey !== null))) keys.set(e.kid, cached);
        else {
          const key = await keyDir.loadEntry(e, signs ? opts.signers : undefined);
          if (signs && key.privateKey === null)
            throw new BridgeConfigError(
              'invalid_option',
              `the active key ${e.kid} is on a PKCS#11 token: only token-bridge serve signs with it`,
            );
          if (signs) opened.push(key.privateKey as Signer);
          keys.set(e.kid, key);
        }
      }
    } catch (err) {
      for (const s of opened) await opts.signers?.close(s);
      throw err;
    }
    return { entries, keys, active: keys.get(activeEntry.kid)!, jwks: { keys: entries.map((e) => keys.get(e.kid)!.jwk) } };
  }

  /** The token signer of the active key, when it is on a token (`/ready` waits for it, `/health` lists it). */
  signers(): readonly Signer[] {
    const k = this.snap.active.privateKey;
    return k !== null && 'status' in k ? [k] : [];
  }

  /** Close the token signers of keys the new snapshot no longer signs with. */
  private async closeUnused(before: Snapshot, after: Snapshot): Promise<void> {
    const keep = new Set([...after.keys.values()].map((k) => k.privateKey));
    for (const k of before.keys.values()) {
      if (k.privateKey !== null && 'status' in k.privateKey && !keep.has(k.privateKey)) await this.opts.signers?.close(k.privateKey);
    }
  }

  get active(): SigningKey {
    return this.snap.active;
  }

  get entries(): readonly KeyEntry[] {
    return this.snap.entries;
  }

  jwks(): { keys: PublicJwk[] } {
    return this.snap.jwks;
  }

  algs(): SigningAlg[] {
    const set = new Set(this.snap.jwks.keys.map((k) => k.alg));
    return [...set].sort();
  }

  /**
   * Re-read keys.json (new keys from `keys rotate`, pruned ones), promote a due key, and swap in the
   * result. Throws (keeping the previous keyring) when the directory cannot be used.
   */
  async refresh(now: number): Promise<{ changed: boolean; promoted: string | null }> {
    const before = this.snap;
    const snap = await SigningKeyring.load(this.keyDir, this.opts, now, before.keys);
    this.snap = snap;
    await this.closeUnused(before, snap);
    const changed = JSON.stringify(snap.entries) !== JSON.stringify(before.entries);
    return { changed, promoted: snap.active.kid !== before.active.kid ? snap.active.kid : null };
  }

  /** Refresh every `intervalMs` and on SIGHUP; `report` receives each outcome. */
  start(intervalMs: number, report: (r: { source: string; error?: unknown; changed?: boolean; promoted?: string | null }) => void): void {
    const run = (source: string): void => {
      this.refresh(Math.floor(Date.now() / 1000)).then(
        (r) => {
          report({ source, ...r });
        },
        (error: unknown) => {
          report({ source, error });
        },
      );
    };
    this.timer = setInterval(() => {
      run('timer');
    }, intervalMs);
    this.timer.unref();
    this.onHup = () => {
      run('SIGHUP');
    };
    process.on('SIGHUP', this.onHup);
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.onHup !== undefined) process.off('SIGHUP', this.onHup);
  }

  /** Close every token signer (at shutdown). */
  async close(): Promise<void> {
    this.stop();
    await this.opts.signers?.closeAll();
  }
}

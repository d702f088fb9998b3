/**
 * The signing-key directory (`--key-dir`, SPEC §7): one PKCS#8 PEM per key, `<kid>.pem`, mode 0600,
 * plus `keys.json`. Writers take `keys.json.lock` (O_EXCL; older than 60 s is abandoned) and replace
 * keys.json by rename. `SigningKeyring` is the serving view (active key, published JWKS), refreshed
 * at start, on SIGHUP and every 60 s; a failed refresh keeps the previous one. Times: unix seconds.
 * SPEC §1.1: an entry with `ref`/`jwk` is a P-256 key on a PKCS#11 token (keys-external.ts): no
 * key file; the keyring opens the token signer of the active key only and closes it once it is not.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
  constants,
} from 'node:fs';
import { join } from 'node:path';
import { parseStrictJson } from '../encoding/json.ts';
import { formatTimestamp } from '../encoding/time.ts';
import { ProtocolError } from '../errors.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { BridgeConfigError } from './errors.ts';
import { addKey, encodeKeysJson, parseKeysJson, promote, prune, publicationOrder, retentionSeconds } from './keyring.ts';
import type { EcPublicJwk, KeyEntry } from './keyring.ts';
import { jwkThumbprint, readTokenJwk, type BridgeSigners } from './keys-external.ts';
import { generateSigningKeyPem, loadSigningKey } from './signing.ts';
import type { Signer } from '../keys/signer.ts';
import type { PublicJwk, SigningAlg, SigningKey } from './signing.ts';

const LOCK_STALE_MS = 60_000;
const LOCK_WAIT_MS = 10_000;

export class KeyDir {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  get jsonPath(): string {
    return join(this.dir, 'keys.json');
  }

  pemPath(kid: string): string {
    return join(this.dir, `${kid}.pem`);
  }

  /** Create the directory (mode 0700) when missing. */
  ensure(): void {
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (!statSync(this.dir).isDirectory()) throw new BridgeConfigError('key_dir_invalid', `${this.dir} is not a directory`);
  }

  hasKeysJson(): boolean {
    return existsSync(this.jsonPath);
  }

  pemFiles(): string[] {
    return existsSync(this.dir) ? readdirSync(this.dir).filter((f) => f.endsWith('.pem')) : [];
  }

  /** keys.json entries; an absent file is an empty list only when the directory holds no key files. */
  readEntries(): readonly KeyEntry[] {
    if (!this.hasKeysJson()) {
      const stray = this.pemFiles();
      if (stray.length > 0) {
        throw new BridgeConfigError(
          'key_dir_invalid',
          `${this.dir} holds key files (${stray.join(', ')}) but no keys.json; refusing to guess their states`,
        );
      }
      return [];
    }
    let doc: unknown;
    try {
      doc = parseStrictJson(readFileSync(this.jsonPath, 'utf8'), { maxDepth: 8 });
    } catch (e) {
      throw new BridgeConfigError('key_dir_invalid', `${this.jsonPath}: ${(e as Error).message}`);
    }
    return parseKeysJson(doc);
  }

  writeEntries(entries: readonly KeyEntry[]): void {
    const tmp = `${this.jsonPath}.tmp-${process.pid}`;
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
    try {
      writeSync(fd, JSON.stringify(encodeKeysJson(entries), null, 2) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.jsonPath);
    const dfd = openSync(this.dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  }

  /** Run `fn` holding keys.json.lock. */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    this.ensure();
    const lock = `${this.jsonPath}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        try {
          if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
        } catch {
          /* removed meanwhile */
        }
        if (Date.now() > deadline) throw new BridgeConfigError('key_dir_locked', `${lock} is held by another process`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    try {
      return await fn();
    } finally {
      rmSync(lock, { force: true });
    }
  }

  /**
   * One entry's key: a token key (`ref`) from its `jwk` — with `signers`, its signer opened too —,
   * else its key file (loadKey).
   */
  async loadEntry(e: KeyEntry, signers: BridgeSigners | undefined): Promise<SigningKey> {
    if (e.ref === undefined || e.jwk === undefined) return this.loadKey(e.kid);
    if ((await jwkThumbprint(e.jwk)) !== e.kid)
      throw new BridgeConfigError('key_mismatch', `${this.jsonPath}: the jwk of ${e.kid} has another thumbprint`);
    const jwk = {
      kty: 'EC' as const,
      alg: 'ES256' as const,
      use: 'sig' as const,
      kid: e.kid,
      crv: 'P-256' as const,
      x: e.jwk.x,
      y: e.jwk.y,
    };
    const privateKey = signers === undefined ? null : await signers.open(e.kid, e.ref, e.jwk);
    return { kid: e.kid, alg: 'ES256', privateKey, jwk };
  }

  /** Read and check one key file: readable (0600), a usable key, and its thumbprint equal to `kid`. */
  async loadKey(kid: string): Promise<SigningKey> {
    let key: SigningKey;
    try {
      key = await loadSigningKey(readKeyFile(this.pemPath(kid)));
    } catch (e) {
      if (e instanceof ProtocolError) throw new BridgeConfigError('key_unreadable', `signing key ${kid}: ${e.message}`);
      throw e;
    }
    if (key.kid !== kid) throw new BridgeConfigError('key_mismatch', `${this.pemPath(kid)} holds key ${key.kid}, not ${kid}`);
    return key;
  }

  /**
   * Add a key (SPEC `keys rotate`): the first key of an empty directory is active at once; later
   * ones are `next` with `not_before` = now + prepublish. Returns the new entry.
   */
  async rotate(now: number, prepublish: number, alg: SigningAlg): Promise<KeyEntry> {
    return this.withLock(async () => {
      const entries = this.readEntries();
      const pending = entries.find((e) => e.state === 'next');
      if (pending !== undefined) {
        throw new BridgeConfigError(
          'next_key_pending',
          `key ${pending.kid} is already waiting to become active at ${formatTimestamp(pending.notBefore)}; rotate again after it has`,
        );
      }
      const pem = await generateSigningKeyPem(alg);
      const key = await loadSigningKey(pem);
      const updated = addKey(entries, key.kid, now, prepublish);
      writeNewKeyFile(this.pemPath(key.kid), pem);
      this.writeEntries(updated);
      return updated.find((e) => e.kid === key.kid)!;
    });
  }

  /**
   * `keys rotate --ref URI` (SPEC §1.1): add the P-256 key on a PKCS#11 token, read through its
   * public key (token objects are never changed); no key file is written.
   */
  async rotateRef(now: number, prepublish: number, ref: string): Promise<KeyEntry> {
    const { kid, jwk }: { kid: string; jwk: EcPublicJwk } = await readTokenJwk(ref);
    return this.withLock(async () => {
      const updated = addKey(this.readEntries(), kid, now, prepublish, { ref, jwk });
      this.writeEntries(updated);
      return Promise.resolve(updated.find((e) => e.kid === kid)!);
    });
  }

  /** Create the first key (active at once) unless the directory already has keys; returns whether it did. */
  async ensureFirstKey(now: number, alg: SigningAlg): Promise<boolean> {
    if (this.readEntries().length > 0) return false;
    return this.withLock(async () => {
      if (this.readEntries().length > 0) return false; // another process created it meanwhile
      const pem = await generateSigningKeyPem(alg);
      const key = await loadSigningKey(pem);
      writeNewKeyFile(this.pemPath(key.kid), pem);
      this.writeEntries(addKey([], key.kid, now, 0));
      return true;
    });
  }

  /**
   * Promote a due `next` key (writes keys.json when something changed). A key directory this
   * process cannot write (replicas sharing one read-only secret volume; `keys rotate` runs against
   * its source) is promoted in memory only, as of the next key's `not_before`, so every replica
   * computes the same entries and publishes the same JWKS.
   */
  async promote(now: number, maxTtl: number): Promise<readonly KeyEntry[]> {
    const entries = this.readEntries();
    if (promote(entries, now, retentionSeconds(maxTtl)) === entries) return entries;
    try {
      return await this.withLock(async () => {
        const current = this.readEntries();
        const updated = promote(current, now, retentionSeconds(maxTtl));
        if (updated !== current) this.writeEntries(updated);
        return Promise.resolve(updated);
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EROFS' && code !== 'EACCES' && code !== 'EPERM') throw e;
      const next = entries.find((x) => x.state === 'next')!;
      return promote(entries, next.notBefore, retentionSeconds(maxTtl));
    }
  }

  /** Drop retired keys past their `retire_after`, with their key files. Returns the dropped entries. */
  async prune(now: number): Promise<readonly KeyEntry[]> {
    return this.withLock(async () => {
      const { kept, dropped } = prune(this.readEntries(), now);
      if (dropped.length > 0) {
        this.writeEntries(kept);
        for (const e of dropped) rmSync(this.pemPath(e.kid), { force: true });
      }
      return Promise.resolve(dropped);
    });
  }
}

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

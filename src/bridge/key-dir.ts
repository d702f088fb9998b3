/**
 * The signing-key directory (`--key-dir`, SPEC §7): one PKCS#8 PEM per key, `<kid>.pem`, mode 0600,
 * plus `keys.json`. Writers take `keys.json.lock` (O_EXCL; older than 60 s is abandoned) and replace
 * keys.json by rename. The serving view over it is `SigningKeyring` (signing-keyring.ts). Times:
 * unix seconds. SPEC §1.1: an entry with `ref`/`jwk` is a P-256 key on a PKCS#11 token
 * (keys-external.ts): no key file.
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
import { addKey, encodeKeysJson, parseKeysJson, promote, prune, retentionSeconds } from './keyring.ts';
import type { EcPublicJwk, KeyEntry } from './keyring.ts';
import { jwkThumbprint, readTokenJwk, type BridgeSigners } from './keys-external.ts';
import { generateSigningKeyPem, loadSigningKey } from './signing.ts';
import type { SigningAlg, SigningKey } from './signing.ts';

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

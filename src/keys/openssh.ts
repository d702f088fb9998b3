/**
 * OpenSSH encodings for Ed25519 keys (SPEC §1.1), pure: the SSH wire `string` (RFC 4251 §5), the
 * `ssh-ed25519` public key blob (RFC 8709), its fingerprint as `ssh-keygen -l -E sha256` prints it
 * (`SHA256:` + unpadded base64 of SHA-256 of the blob), and the unencrypted `openssh-key-v1`
 * private key file that `ssh-add` loads (OpenSSH's PROTOCOL.key). OpenSSH refuses PKCS#8 PEM
 * Ed25519 keys, hence `key to-openssh`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { KeyRefError } from './errors.ts';

export const SSH_ED25519 = 'ssh-ed25519';

/** uint32 big-endian length ‖ bytes. */
export function sshString(data: Uint8Array | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

export function sshUint32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
}

/** Reads SSH wire values from a buffer; every read past the end throws `RangeError`. */
export class SshReader {
  private off = 0;
  private readonly buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.buf = buf;
  }
  uint32(): number {
    if (this.off + 4 > this.buf.length) throw new RangeError('truncated uint32');
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.off, 4).readUInt32BE(0);
    this.off += 4;
    return v;
  }
  byte(): number {
    if (this.off + 1 > this.buf.length) throw new RangeError('truncated byte');
    return this.buf[this.off++]!;
  }
  string(): Uint8Array {
    const n = this.uint32();
    if (this.off + n > this.buf.length) throw new RangeError('truncated string');
    const out = this.buf.subarray(this.off, this.off + n);
    this.off += n;
    return out;
  }
  get done(): boolean {
    return this.off === this.buf.length;
  }
}

/** The `ssh-ed25519` public key blob: string "ssh-ed25519" ‖ string key. */
export function ed25519KeyBlob(publicKey: Uint8Array): Buffer {
  return Buffer.concat([sshString(SSH_ED25519), sshString(publicKey)]);
}

/** The raw 32-byte key of an `ssh-ed25519` blob, or undefined for any other blob. */
export function ed25519KeyFromBlob(blob: Uint8Array): Uint8Array | undefined {
  try {
    const r = new SshReader(blob);
    const type = Buffer.from(r.string()).toString('latin1');
    const key = r.string();
    if (type !== SSH_ED25519 || key.length !== 32 || !r.done) return undefined;
    return Uint8Array.from(key);
  } catch {
    return undefined;
  }
}

/** `SHA256:` + unpadded base64 of SHA-256 of the blob. */
export function sshFingerprint(blob: Uint8Array): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

export function ed25519Fingerprint(publicKey: Uint8Array): string {
  return sshFingerprint(ed25519KeyBlob(publicKey));
}

/** One line of an OpenSSH `authorized_keys`/`.pub` file. */
export function ed25519PublicKeyLine(publicKey: Uint8Array, comment: string): string {
  return `${SSH_ED25519} ${ed25519KeyBlob(publicKey).toString('base64')}${comment === '' ? '' : ' ' + comment}`;
}

/**
 * An unencrypted `openssh-key-v1` private key (cipher and KDF "none") holding one Ed25519 key, as
 * `ssh-keygen -t ed25519 -N ''` writes it.
 */
export function ed25519OpensshPrivateKey(seed: Uint8Array, publicKey: Uint8Array, comment: string): string {
  if (seed.length !== 32 || publicKey.length !== 32) {
    throw new KeyRefError('key_unsupported', 'openssh-key-v1: an Ed25519 key is a 32-byte seed and a 32-byte public key');
  }
  const check = randomBytes(4);
  const priv = Buffer.concat([
    check,
    check,
    sshString(SSH_ED25519),
    sshString(publicKey),
    sshString(Buffer.concat([seed, publicKey])),
    sshString(comment),
  ]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    sshUint32(1),
    sshString(ed25519KeyBlob(publicKey)),
    sshString(Buffer.concat([priv, Buffer.from(pad)])),
  ]);
  const b64 = body.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 70) lines.push(b64.slice(i, i + 70));
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/**
 * Key references (SPEC §1.1): what `--key`, `--next-key`, `--kel-key`, Ed25519 `--cosign-key`s and
 * a bridge `keys.json` `"ref"` may name. Pure parsing, no I/O.
 *
 *   keyref = "ssh-agent:SHA256:" 43base64 [ "?socket=" pct-encoded-absolute-path ]
 *          / pkcs11-URI                     ; RFC 7512, restricted (below)
 *          / [ "file:" ] path               ; a leading "file:" is stripped; any other value is a path
 *
 * `pkcs11:` accepts the path attributes token, manufacturer, serial, model, slot-id, object, id and
 * type=private, and the query attributes module-path (required, absolute) and pin-source (required,
 * `file:` + an absolute path). `pin-value`, any other or repeated attribute, or bad pct-encoding is
 * `key_ref_invalid`.
 */
import { KeyRefError } from './errors.ts';

export interface FileKeyRef {
  readonly kind: 'file';
  readonly path: string;
}

export interface SshAgentKeyRef {
  readonly kind: 'ssh-agent';
  /** `SHA256:` + 43 unpadded base64 characters, as `ssh-keygen -l -E sha256` prints it. */
  readonly fingerprint: string;
  /** The agent socket named in the reference; undefined = `SSH_AUTH_SOCK`. */
  readonly socket: string | undefined;
}

export interface Pkcs11TokenMatch {
  readonly token?: string;
  readonly manufacturer?: string;
  readonly serial?: string;
  readonly model?: string;
  readonly slotId?: bigint;
}

export interface Pkcs11KeyRef {
  readonly kind: 'pkcs11';
  readonly tokenMatch: Pkcs11TokenMatch;
  /** CKA_LABEL of the private key. */
  readonly object: string | undefined;
  /** CKA_ID of the private key (raw bytes). */
  readonly id: Uint8Array | undefined;
  readonly modulePath: string;
  readonly pinFile: string;
}

export type KeyRef = FileKeyRef | SshAgentKeyRef | Pkcs11KeyRef;

const FINGERPRINT_RE = /^SHA256:[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]$/;

function invalid(ref: string, why: string): never {
  throw new KeyRefError('key_ref_invalid', `key reference ${redactKeyRef(ref)}: ${why}`);
}

/** RFC 3986 pct-decoding to bytes; `%` must be followed by two hex digits. */
function pctDecodeBytes(ref: string, s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) invalid(ref, `bad pct-encoding at "${s.slice(i, i + 3)}"`);
      out.push(parseInt(hex, 16));
      i += 2;
    } else if (c > 0x20 && c < 0x7f) {
      out.push(c);
    } else {
      invalid(ref, 'characters outside printable ASCII must be pct-encoded');
    }
  }
  return Uint8Array.from(out);
}

function pctDecodeText(ref: string, s: string): string {
  const bytes = pctDecodeBytes(ref, s);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return invalid(ref, 'a pct-encoded value is not UTF-8');
  }
}

function absolutePath(ref: string, what: string, p: string): string {
  if (!p.startsWith('/')) invalid(ref, `${what} must be an absolute path`);
  if (p.includes('\0')) invalid(ref, `${what} contains NUL`);
  return p;
}

function parseSshAgent(ref: string): SshAgentKeyRef {
  const rest = ref.slice('ssh-agent:'.length);
  const q = rest.indexOf('?');
  const fingerprint = q < 0 ? rest : rest.slice(0, q);
  if (!FINGERPRINT_RE.test(fingerprint)) {
    invalid(ref, 'expected ssh-agent:SHA256:<43 base64 characters> (the fingerprint ssh-add -l -E sha256 prints)');
  }
  if (q < 0) return { kind: 'ssh-agent', fingerprint, socket: undefined };
  const query = rest.slice(q + 1);
  if (!query.startsWith('socket=') || query.includes('&')) invalid(ref, 'the only query attribute is socket=');
  const socket = absolutePath(ref, 'socket', pctDecodeText(ref, query.slice('socket='.length)));
  return { kind: 'ssh-agent', fingerprint, socket };
}

const PATH_ATTRS = new Set(['token', 'manufacturer', 'serial', 'model', 'slot-id', 'object', 'id', 'type']);
const QUERY_ATTRS = new Set(['module-path', 'pin-source']);

function splitAttrs(ref: string, part: string, sep: string, allowed: Set<string>, seen: Map<string, string>): void {
  if (part === '') return;
  for (const attr of part.split(sep)) {
    const eq = attr.indexOf('=');
    if (eq <= 0) invalid(ref, `attribute "${attr}" is not name=value`);
    const name = attr.slice(0, eq);
    if (name === 'pin-value') invalid(ref, 'pin-value is refused: put the PIN in a 0600 file and name it with pin-source=file:/path');
    if (!allowed.has(name)) invalid(ref, `attribute "${name}" is not accepted here`);
    if (seen.has(name)) invalid(ref, `attribute "${name}" is repeated`);
    seen.set(name, attr.slice(eq + 1));
  }
}

function parsePkcs11(ref: string): Pkcs11KeyRef {
  const body = ref.slice('pkcs11:'.length);
  const q = body.indexOf('?');
  const attrs = new Map<string, string>();
  splitAttrs(ref, q < 0 ? body : body.slice(0, q), ';', PATH_ATTRS, attrs);
  splitAttrs(ref, q < 0 ? '' : body.slice(q + 1), '&', QUERY_ATTRS, attrs);
  const text = (name: string): string | undefined => {
    const v = attrs.get(name);
    return v === undefined ? undefined : pctDecodeText(ref, v);
  };
  const type = text('type');
  if (type !== undefined && type !== 'private') invalid(ref, 'type must be private');
  const slot = text('slot-id');
  if (slot !== undefined && !/^(0|[1-9][0-9]{0,19})$/.test(slot)) invalid(ref, 'slot-id must be a decimal number');
  const modulePath = text('module-path');
  if (modulePath === undefined) invalid(ref, 'module-path= (the absolute path of the PKCS#11 module) is required');
  const pinSource = text('pin-source');
  if (pinSource === undefined) invalid(ref, 'pin-source=file:/path (a 0600 file holding the PIN) is required');
  if (!pinSource.startsWith('file:')) invalid(ref, 'pin-source must be file: + an absolute path');
  const idRaw = attrs.get('id');
  const tokenMatch: Pkcs11TokenMatch = {
    ...optional('token', text('token')),
    ...optional('manufacturer', text('manufacturer')),
    ...optional('serial', text('serial')),
    ...optional('model', text('model')),
    ...(slot === undefined ? {} : { slotId: BigInt(slot) }),
  };
  const object = text('object');
  const id = idRaw === undefined ? undefined : pctDecodeBytes(ref, idRaw);
  if (object === undefined && id === undefined) invalid(ref, 'name the private key with object= (CKA_LABEL) or id= (CKA_ID)');
  return {
    kind: 'pkcs11',
    tokenMatch,
    object,
    id,
    modulePath: absolutePath(ref, 'module-path', modulePath),
    pinFile: absolutePath(ref, 'pin-source', pinSource.slice('file:'.length)),
  };
}

function optional<K extends string>(k: K, v: string | undefined): { [P in K]?: string } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: string };
}

/** Parse a key reference (see the module comment); throws KeyRefError `key_ref_invalid`. */
export function parseKeyRef(ref: string): KeyRef {
  if (ref.startsWith('ssh-agent:')) return parseSshAgent(ref);
  if (ref.startsWith('pkcs11:')) return parsePkcs11(ref);
  const path = ref.startsWith('file:') ? ref.slice('file:'.length) : ref;
  if (path === '') invalid(ref, 'empty path');
  return { kind: 'file', path };
}

/**
 * The reference as logs and `/health` show it: an ssh-agent `socket` and a pkcs11 `pin-source` are
 * replaced by `<redacted>` (the PIN itself is never in a reference: pin-value is refused).
 */
export function redactKeyRef(ref: string): string {
  if (ref.startsWith('ssh-agent:')) return ref.replace(/\?socket=.*$/, '?socket=<redacted>');
  if (ref.startsWith('pkcs11:')) return ref.replace(/(pin-(?:source|value)=)[^&;]*/g, '$1<redacted>');
  return ref;
}

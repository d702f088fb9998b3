/**
 * Base64 codecs (RFC 4648). Decoders are strict: standard base64 must be padded and canonical
 * (the unused trailing bits are zero), base64url must be unpadded and canonical. Node's own
 * decoder silently skips junk, so the alphabet and canonical form are checked here. Buffer does
 * the conversion in Node; portable.ts where there is none (browsers).
 */
import { EncodingError } from './errors.ts';
import { NodeBuffer, base64FromBytes, bytesFromBase64 } from './portable.ts';

const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

export function encodeBase64(bytes: Uint8Array): string {
  if (NodeBuffer === undefined) return base64FromBytes(bytes);
  return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export function encodeBase64url(bytes: Uint8Array): string {
  if (NodeBuffer === undefined) return base64FromBytes(bytes, true);
  return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Decode canonical padded standard base64; with `length`, the decoded size must match. */
export function decodeBase64(text: string, length?: number): Uint8Array {
  if (!B64_RE.test(text)) throw new EncodingError('invalid_base64', 'not padded standard base64');
  const bytes = NodeBuffer === undefined ? bytesFromBase64(text) : new Uint8Array(NodeBuffer.from(text, 'base64'));
  if (encodeBase64(bytes) !== text) throw new EncodingError('invalid_base64', 'non-canonical base64 (trailing bits set)');
  if (length !== undefined && bytes.length !== length) {
    throw new EncodingError('invalid_base64', `expected ${length} bytes of base64, got ${bytes.length}`);
  }
  return bytes;
}

/** Decode canonical unpadded base64url; with `length`, the decoded size must match. */
export function decodeBase64url(text: string, length?: number): Uint8Array {
  if (!B64URL_RE.test(text) || text.length % 4 === 1) {
    throw new EncodingError('invalid_base64url', 'not unpadded base64url');
  }
  const bytes = NodeBuffer === undefined ? bytesFromBase64(text) : new Uint8Array(NodeBuffer.from(text, 'base64url'));
  if (encodeBase64url(bytes) !== text) throw new EncodingError('invalid_base64url', 'non-canonical base64url (trailing bits set)');
  if (length !== undefined && bytes.length !== length) {
    throw new EncodingError('invalid_base64url', `expected ${length} bytes of base64url, got ${bytes.length}`);
  }
  return bytes;
}

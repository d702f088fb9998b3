/**
 * Hex codec. Output is lowercase; input accepts either case but nothing else (no 0x, no spaces).
 * Buffer does the conversion in Node; portable.ts where there is none (browsers).
 */
import { EncodingError } from './errors.ts';
import { NodeBuffer, bytesFromHex, hexFromBytes } from './portable.ts';

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

export function encodeHex(bytes: Uint8Array): string {
  if (NodeBuffer === undefined) return hexFromBytes(bytes);
  return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Decode hex; when `length` is given the decoded value must be exactly that many bytes. */
export function decodeHex(text: string, length?: number): Uint8Array {
  if (!HEX_RE.test(text)) throw new EncodingError('invalid_hex', 'not an even-length hex string');
  const bytes = NodeBuffer === undefined ? bytesFromHex(text) : new Uint8Array(NodeBuffer.from(text, 'hex'));
  if (length !== undefined && bytes.length !== length) {
    throw new EncodingError('invalid_hex', `expected ${length} bytes of hex, got ${bytes.length}`);
  }
  return bytes;
}

export const decodeHex32 = (text: string): Uint8Array => decodeHex(text, 32);
export const decodeHex64 = (text: string): Uint8Array => decodeHex(text, 64);

/** True when `text` is exactly `length` bytes of hex (either case). */
export function isHex(text: string, length: number): boolean {
  return text.length === length * 2 && HEX_RE.test(text);
}

/**
 * `POST /token` request body (SPEC §7), decoded strictly: unknown members, wrong types, a chain
 * outside 1..8 links, an empty `requested_capabilities` or a malformed capability are
 * `malformed_body` with the JSON pointer of the first offending field. The proof's contents are
 * judged later (`pop_invalid`, in the SPEC's check order); only its shape is checked here.
 */
import { decodeHex } from '../encoding/hex.ts';
import { decodeAttestation, decodeCapabilities } from './attestation.ts';
import type { Attestation } from './attestation.ts';
import { MAX_CHAIN_LINKS } from './chain.ts';
import { malformed } from './errors.ts';
import { isJsonObject } from '../encoding/json.ts';
import { decodeFinalizedAnchor, type FinalizedAnchorRequest } from './freshness-gate.ts';

export const MAX_AUDIENCE_LENGTH = 1024;

export interface TokenRequest {
  chain: Attestation[];
  rootPublicKey: Uint8Array;
  audience: string | undefined;
  ttlSecs: number | undefined;
  requestedCapabilities: string[] | undefined;
  proof: { iat: number; nonce: string; signature: string } | undefined;
  /** SPEC §7.2: the finalized anchor of the chain state (shape checked here; the gate judges it). */
  finalizedAnchor: FinalizedAnchorRequest | undefined;
  /** The request object as parsed (what the proof's `req` hash covers, minus `proof`). */
  raw: Readonly<Record<string, unknown>>;
}

const FIELDS = new Set([
  'attestation_chain',
  'root_public_key',
  'audience',
  'ttl_secs',
  'requested_capabilities',
  'proof',
  'finalized_anchor',
]);

function decodeProof(v: unknown): TokenRequest['proof'] {
  if (!isJsonObject(v)) throw malformed('/proof', 'must be an object {iat, nonce, signature}');
  for (const k of Object.keys(v)) if (k !== 'iat' && k !== 'nonce' && k !== 'signature') throw malformed(`/proof/${k}`, 'unknown field');
  if (v.iat === undefined) throw malformed('/proof/iat', 'required');
  if (typeof v.iat !== 'number' || !Number.isSafeInteger(v.iat)) throw malformed('/proof/iat', 'must be an integer (unix seconds)');
  if (typeof v.nonce !== 'string') throw malformed('/proof/nonce', v.nonce === undefined ? 'required' : 'must be a string');
  if (typeof v.signature !== 'string') throw malformed('/proof/signature', v.signature === undefined ? 'required' : 'must be a hex string');
  return { iat: v.iat, nonce: v.nonce, signature: v.signature };
}

/** Decode a parsed `/token` body; throws BridgeError `malformed_body`. */
export function decodeTokenRequest(doc: unknown): TokenRequest {
  if (!isJsonObject(doc)) throw malformed('', 'request body must be a JSON object');
  for (const k of Object.keys(doc))
    if (!FIELDS.has(k)) throw malformed(`/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`, 'unknown field');
  const list = doc.attestation_chain;
  if (list === undefined) throw malformed('/attestation_chain', 'required');
  if (!Array.isArray(list)) throw malformed('/attestation_chain', 'must be an array of attestations (root → leaf)');
  if (list.length === 0) throw malformed('/attestation_chain', 'must hold at least 1 attestation');
  if (list.length > MAX_CHAIN_LINKS)
    throw malformed('/attestation_chain', `must hold at most ${MAX_CHAIN_LINKS} attestations, got ${list.length}`);
  const chain = list.map((a: unknown, i) => decodeAttestation(a, `/attestation_chain/${i}`));
  const rpk = doc.root_public_key;
  if (rpk === undefined) throw malformed('/root_public_key', 'required');
  if (typeof rpk !== 'string') throw malformed('/root_public_key', 'must be a hex string');
  let rootPublicKey: Uint8Array;
  try {
    rootPublicKey = decodeHex(rpk, 32);
  } catch {
    throw malformed('/root_public_key', 'must be 32 bytes of hex (an Ed25519 public key)');
  }
  let audience: string | undefined;
  if (doc.audience !== undefined) {
    if (typeof doc.audience !== 'string' || doc.audience === '' || doc.audience.length > MAX_AUDIENCE_LENGTH) {
      throw malformed('/audience', `must be a non-empty string of at most ${MAX_AUDIENCE_LENGTH} characters`);
    }
    audience = doc.audience;
  }
  let ttlSecs: number | undefined;
  if (doc.ttl_secs !== undefined) {
    if (typeof doc.ttl_secs !== 'number' || !Number.isSafeInteger(doc.ttl_secs) || doc.ttl_secs < 1)
      throw malformed('/ttl_secs', 'must be a positive integer');
    ttlSecs = doc.ttl_secs;
  }
  let requestedCapabilities: string[] | undefined;
  if (doc.requested_capabilities !== undefined) {
    requestedCapabilities = decodeCapabilities(doc.requested_capabilities, '/requested_capabilities');
    if (requestedCapabilities.length === 0)
      throw malformed('/requested_capabilities', "must not be empty (omit it to get the leaf's capabilities)");
  }
  const proof = doc.proof === undefined ? undefined : decodeProof(doc.proof);
  const finalizedAnchor = doc.finalized_anchor === undefined ? undefined : decodeFinalizedAnchor(doc.finalized_anchor);
  return { chain, rootPublicKey, audience, ttlSecs, requestedCapabilities, proof, finalizedAnchor, raw: doc };
}

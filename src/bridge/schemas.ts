/**
 * OpenAPI documentation of the `/token` request and response bodies. Documentation only: the strict
 * decoder (src/bridge/request.ts) does the validation.
 */

const hexString = (bytes: number) => ({ type: 'string', pattern: `^[0-9a-fA-F]{${bytes * 2}}$` });
const nullableTime = {
  type: ['string', 'null'],
  description: 'RFC 3339; re-printed in UTC with 0/3/6/9 fraction digits in the signed bytes',
};
const capability = { type: 'string', pattern: '^[a-z0-9_:-]{1,64}$' };

export const ATTESTATION_SCHEMA = {
  type: 'object',
  description: 'auths v1 attestation; signed bytes = JCS of the decoded fields (docs/protocol.md §7)',
  required: ['version', 'rid', 'issuer', 'subject', 'device_public_key'],
  additionalProperties: false,
  properties: {
    version: { type: 'integer', minimum: 0, maximum: 4294967295 },
    rid: { type: 'string' },
    issuer: { type: 'string', description: 'DID; chain[0].issuer is the token subject' },
    subject: { type: 'string' },
    device_public_key: hexString(32),
    identity_signature: {
      type: 'string',
      description: 'hex Ed25519 signature by the issuer key; required (absent or empty → 401 chain_signature_invalid)',
    },
    device_signature: { type: 'string', description: 'hex Ed25519 signature by device_public_key; required' },
    expires_at: nullableTime,
    revoked_at: nullableTime,
    timestamp: nullableTime,
    note: { type: ['string', 'null'] },
    payload: {},
    role: { enum: ['admin', 'member', 'readonly', null] },
    capabilities: { type: ['array', 'null'], items: capability },
    delegated_by: { type: ['string', 'null'] },
    signer_type: { enum: ['Human', 'Agent', 'Workload', null] },
  },
} as const;

export const TOKEN_REQUEST_SCHEMA = {
  type: 'object',
  required: ['attestation_chain', 'root_public_key'],
  additionalProperties: false,
  properties: {
    attestation_chain: { type: 'array', minItems: 1, maxItems: 8, items: ATTESTATION_SCHEMA, description: 'root → leaf' },
    root_public_key: hexString(32),
    audience: { type: 'string', description: 'required when proof of possession is on; must be an allowed audience' },
    ttl_secs: { type: 'integer', minimum: 1 },
    requested_capabilities: { type: 'array', minItems: 1, items: capability },
    proof: {
      type: 'object',
      required: ['iat', 'nonce', 'signature'],
      additionalProperties: false,
      description:
        'Ed25519 signature by the leaf device key over JCS {"v":"token-bridge/pop/v1","iss":<issuer>,"aud":<audience>,"iat","nonce","req":<hex SHA-256 of JCS(request without proof)>}',
      properties: { iat: { type: 'integer' }, nonce: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' }, signature: hexString(64) },
    },
    finalized_anchor: {
      type: 'object',
      required: ['bundle', 'proof'],
      additionalProperties: false,
      description:
        'With --require-finalized-anchor (docs/bridge.md): the finalized bundle of the chain state (≤ 16 receipts) and the inclusion proof of this chain under the anchor head',
      properties: {
        bundle: { type: 'object' },
        agent: { type: 'string', pattern: '^did:keri:[A-Za-z0-9_-]{1,256}$' },
        proof: {
          type: 'object',
          required: ['leaf_index', 'tree_size', 'hashes'],
          additionalProperties: false,
          properties: {
            leaf_index: { type: 'integer', minimum: 0 },
            tree_size: { type: 'integer', minimum: 1, maximum: 1048576 },
            hashes: { type: 'array', maxItems: 20, items: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

export const TOKEN_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'subject'],
  properties: {
    access_token: { type: 'string' },
    token_type: { const: 'Bearer' },
    expires_in: { type: 'integer' },
    subject: { type: 'string' },
  },
} as const;

/** A validator compiler that accepts everything: the strict decoder validates, these schemas only document. */
export const documentationOnly = () => () => true;

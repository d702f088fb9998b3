/**
 * JSON Schemas (TypeBox) of the anchor wire format and the anchor routes. They drive request
 * validation (ajv, strict: no coercion, no removal of unknown fields) and the OpenAPI document.
 * Canonical forms that a schema cannot express (u128 range, calendar dates, key length per curve,
 * lone surrogates) are checked by the decoder, which answers the same 400 `malformed_body`.
 */
import { Type } from 'typebox';

export const Hex32 = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: '32 bytes, hex (lowercase on output)' });
export const HexBytes = (min: number, max: number, description: string) =>
  Type.String({ pattern: `^(?:[0-9a-fA-F]{2}){${min},${max}}$`, description });

export const U128 = Type.Union(
  [
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    Type.String({ pattern: '^(?:0|[1-9][0-9]{0,38})$', description: 'canonical decimal, < 2^128' }),
  ],
  {
    description:
      'unsigned integer < 2^128: on input a JSON integer literal (any size) or a canonical decimal string; on output always a JSON integer literal with every digit',
  },
);

export const AnchorTimestamp = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$',
  description: 'YYYY-MM-DDTHH:MM:SSZ (whole seconds, UTC)',
});

export const AnchorSchema = Type.Object(
  {
    seed_id: Hex32,
    index: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    head: Hex32,
    cumulative: U128,
    timestamp: AnchorTimestamp,
    witness_set: Type.Object(
      { said: Type.String({ minLength: 1, maxLength: 128 }), threshold: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) },
      { additionalProperties: false },
    ),
    sig_party: Type.Object(
      {
        curve: Type.Union([Type.Literal('ed25519'), Type.Literal('p256')]),
        public_key: HexBytes(32, 33, 'Ed25519: 32 bytes; P-256: 33-byte compressed SEC1'),
        signature: HexBytes(64, 64, '64 bytes (P-256: r‖s, low S)'),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const DidKeri = Type.String({ minLength: 1, maxLength: 265, description: 'did:keri:<prefix> (the did:keri: part optional)' });

export const AnchorRequestSchema = Type.Object(
  {
    anchor: AnchorSchema,
    party: Type.Object(
      { agent: DidKeri, root: Type.Optional(DidKeri), scope: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const DuplicityProofSchema = Type.Object(
  { seed_id: Hex32, index: Type.Integer({ minimum: 0 }), anchor_a: AnchorSchema, anchor_b: AnchorSchema },
  {
    additionalProperties: false,
    description: 'offline-verifiable: same seed and index, different heads, same party key, both signatures valid',
  },
);

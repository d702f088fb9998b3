/** Response schemas of the anchor routes (documentation in /openapi.json; replies use the lossless serializer). */
import { Type } from 'typebox';
import { AnchorSchema, DuplicityProofSchema, Hex32 } from '../anchor/schema.ts';

export const Cosignature = Type.Object({
  witness_name: Type.String(),
  witness_public_key: Hex32,
  signature: Type.String({ description: 'Ed25519 over the cosign message, hex (64 bytes)' }),
  timestamp: Type.String({ description: 'RFC 3339, whole seconds; informational, NOT signed' }),
});

export const Inclusion = Type.Object({
  log_origin: Type.String(),
  leaf_index: Type.Integer({ minimum: 0 }),
  tree_size: Type.Integer({ minimum: 1 }),
  hashes: Type.Array(Type.String(), { description: 'RFC 6962 audit path, leaf to root, base64' }),
  checkpoint: Type.String({ description: 'signed note (C2SP tlog-checkpoint) of tree_size' }),
  tlog_proof: Type.String({ description: 'c2sp.org/tlog-proof@v1 text; its checkpoint is byte-identical to `checkpoint`' }),
});

/** During a witness-key rotation overlap (SPEC §1.2): the next key's cosignature over the same message. */
const CosignatureNext = Type.Optional(Cosignature);

export const AnchorResponse = Type.Object({
  anchor: AnchorSchema,
  cosignature: Cosignature,
  cosignature_next: CosignatureNext,
  inclusion: Inclusion,
  replay: Type.Boolean(),
});

export const LatestAnchor = Type.Object({
  anchor: AnchorSchema,
  cosignature: Cosignature,
  cosignature_next: CosignatureNext,
  inclusion: Inclusion,
  duplicity: Type.Boolean(),
});

export const DuplicityPage = Type.Object({
  items: Type.Array(DuplicityProofSchema),
  next: Type.Union([Hex32, Type.Null()], { description: 'the last seed of a full page; null when there are no more' }),
});

export { DuplicityProofSchema };

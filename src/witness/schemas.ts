/** Response schemas of the node-wide routes (documentation in /openapi.json). */
import { Type } from 'typebox';
import { Hex32 } from '../anchor/schema.ts';

export const Health = Type.Object({
  status: Type.Literal('ok'),
  witness_name: Type.String(),
  roles: Type.Array(Type.String()),
  version: Type.String(),
  log: Type.Object({ origin: Type.String(), size: Type.Integer() }),
  keys: Type.Object({
    witness: Hex32,
    log_vkey: Type.String(),
    /** The first Ed25519 (type 0x04) cosign vkey, or null. */
    cosign_vkey: Type.Union([Type.String(), Type.Null()]),
  }),
  /** Every cosign key's vkey (type 0x04 Ed25519, 0x06 ML-DSA-44), in `--cosign-key` order (SPEC §5.1). */
  cosign_vkeys: Type.Optional(Type.Array(Type.String())),
});

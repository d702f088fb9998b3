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
  // SPEC §4.1, with --log-witnesses only.
  log_witnesses: Type.Optional(
    Type.Array(
      Type.Object({
        url: Type.String(),
        cosigned_size: Type.Integer({ minimum: 0 }),
        last_success: Type.Union([Type.String(), Type.Null()]),
        lag_entries: Type.Integer({ minimum: 0 }),
        lag_seconds: Type.Integer({ minimum: 0 }),
      }),
    ),
  ),
  warnings: Type.Optional(Type.Array(Type.String())),
});

/** `GET /log/checkpoint?unwitnessed=1`: the newest node-signed checkpoint (SPEC §4.1). */
export const CheckpointQuery = Type.Object({ unwitnessed: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')])) });

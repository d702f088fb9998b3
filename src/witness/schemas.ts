/** Response schemas of the node-wide routes (documentation in /openapi.json). */
import { Type } from 'typebox';
import { Hex32 } from '../anchor/schema.ts';
import { SignerStatusSchema } from '../server/readiness.ts';

/** The store behind the node (`/health` "store"): its kind, up or down since when, and the outage's cause. */
export const StoreHealthSchema = Type.Object({
  kind: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres'), Type.Literal('memory')]),
  state: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  since: Type.String(),
  last_error: Type.Union([Type.String(), Type.Null()]),
});

export const Health = Type.Object({
  /** `degraded` while the store is down (the body stays 200; SPEC §6). */
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  store: Type.Optional(StoreHealthSchema),
  /** External signers (SPEC §1.1): `degraded` while one is unavailable. */
  signers: Type.Optional(Type.Array(SignerStatusSchema)),
  witness_name: Type.String(),
  roles: Type.Array(Type.String()),
  version: Type.String(),
  log: Type.Object({ origin: Type.String(), size: Type.Integer() }),
  keys: Type.Object({
    witness: Hex32,
    /** The next witness key during a rotation overlap (SPEC §1.2). */
    witness_next: Type.Optional(Hex32),
    log_vkey: Type.String(),
    /** The first Ed25519 (type 0x04) cosign vkey, or null. */
    cosign_vkey: Type.Union([Type.String(), Type.Null()]),
    /** With role kel: this node's non-transferable KERI prefix (SPEC §3.6.1). */
    kel_prefix: Type.Optional(Type.String()),
  }),
  /** Every cosign key's vkey (type 0x04 Ed25519, 0x06 ML-DSA-44), in `--cosign-key` order (SPEC §5.1). */
  cosign_vkeys: Type.Optional(Type.Array(Type.String())),
  /** with --bastion (SPEC §5.6) */
  bastions: Type.Optional(Type.Array(Type.Object({ addr: Type.String(), connected: Type.Boolean() }))),
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
  // SPEC §3.6.9, with role kel only.
  kel: Type.Optional(
    Type.Object({
      prefix: Type.String(),
      held: Type.Integer({ minimum: 0 }),
      events: Type.Integer({ minimum: 0 }),
      escrowed: Type.Integer({ minimum: 0 }),
      duplicities: Type.Integer({ minimum: 0 }),
    }),
  ),
  warnings: Type.Optional(Type.Array(Type.String())),
});

/** `GET /log/checkpoint?unwitnessed=1`: the newest node-signed checkpoint (SPEC §4.1). */
export const CheckpointQuery = Type.Object({ unwitnessed: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')])) });

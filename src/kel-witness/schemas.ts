/** JSON schemas of the role's JSON reads (SPEC §3.6.4, §3.6.5), for /openapi.json. */
import { Type } from 'typebox';

const Signed = Type.Object(
  {
    event: Type.Object({}, { additionalProperties: true, description: 'the KERI event (KERI10JSON)' }),
    attachment: Type.String({ description: 'its -A group [+ -G]' }),
  },
  { additionalProperties: false },
);

export const KelDuplicityProofSchema = Type.Object(
  {
    v: Type.Literal('anchor-witness/kel-duplicity/v1'),
    witness: Type.String({ description: "this witness's B… prefix" }),
    prefix: Type.String(),
    sn: Type.Integer({ minimum: 0 }),
    a: Signed,
    b: Signed,
    first_seen: Type.Union([Type.Literal('a'), Type.Literal('b')]),
    kel: Type.Union([Type.Array(Signed), Type.Null()], { description: 'the accepted history before sn; null above 1 MiB of JCS' }),
  },
  { additionalProperties: false, description: 'an offline-verifiable KEL duplicity proof (anchor-witness verify kel-duplicity)' },
);

export const KelDuplicityPage = Type.Object(
  {
    items: Type.Array(KelDuplicityProofSchema),
    next: Type.Union([Type.String({ pattern: '^[A-Za-z0-9_-]{44,48}:(0|[1-9][0-9]*)$' }), Type.Null()], {
      description: '<prefix>:<sn> of the last proof of a full page (the next after=); null when there are no more',
    }),
  },
  { additionalProperties: false },
);

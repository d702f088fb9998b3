/** Response schema of GET /build (SPEC §6), for the OpenAPI document. */
import { Type } from 'typebox';

export const BuildStatementSchema = Type.Object(
  {
    version: Type.String({ description: 'version of the running bundle (also in the signed statement)' }),
    running_digest: Type.String({ description: 'SHA-256 (hex) of the bundled entry file the process loaded, computed at start-up' }),
    attestation: Type.Object(
      {
        payloadType: Type.Literal('application/vnd.in-toto+json'),
        payload: Type.String({
          description: 'base64 of an in-toto v1 Statement (SLSA provenance v1 predicate) whose subject is the bundle with running_digest',
        }),
        signatures: Type.Array(Type.Object({ keyid: Type.Optional(Type.String()), sig: Type.String() })),
      },
      {
        description: 'DSSE envelope signed by a release key (Ed25519); verify it with the release key you pin: anchor-witness verify build',
      },
    ),
    node_version: Type.String({ description: 'process.version of the Node.js runtime (not covered by the digest or the signature)' }),
  },
  { description: 'A claim checkable against a reproducible build of the release, not remote attestation (docs/build.md)' },
);

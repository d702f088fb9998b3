/** The JSON schema of a problem+json body (SPEC §2, src/server/problem.ts), for route documentation in /openapi.json. */
import { Type } from 'typebox';

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'stable snake_case error code; clients branch on it' }),
  },
  { description: 'RFC 9457 problem details (application/problem+json)' },
);

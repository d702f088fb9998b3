/**
 * The build statement: an in-toto v1 Statement (in-toto/attestation spec v1) carried in a DSSE
 * envelope of payloadType `application/vnd.in-toto+json`. Its subject is the bundled entry file
 * (name + SHA-256); its predicate is SLSA Provenance v1 (`https://slsa.dev/provenance/v1`) with
 * our build type, recording the release version, the source commit and the builder. Pure: no I/O.
 *
 * {"_type":"https://in-toto.io/Statement/v1",
 *  "subject":[{"name":"anchor-witness.mjs","digest":{"sha256":HEX}}],
 *  "predicateType":"https://slsa.dev/provenance/v1",
 *  "predicate":{"buildDefinition":{"buildType":BUILD_TYPE,
 *                                  "externalParameters":{"version":V,"source":{"commit":SHA,"uri"?:URI}},
 *                                  "resolvedDependencies":[{"uri"?:"git+URI","digest":{"gitCommit":SHA}}]},
 *               "runDetails":{"builder":{"id":BUILDER}}}}
 */
import { isHex } from '../encoding/hex.ts';
import { decodeUtf8, isJsonObject, parseStrictJson } from '../encoding/json.ts';
import { BuildError } from './errors.ts';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PROVENANCE_TYPE = 'https://slsa.dev/provenance/v1';
/** Our SLSA build type: `npm ci && npm run build:bundle` at the source commit (docs/build.md). */
export const BUILD_TYPE = 'urn:anchor-witness:build-type:esbuild-bundle:v1';
/** File name of the bundled entry (the statement's subject name). */
export const BUNDLE_NAME = 'anchor-witness.mjs';

export interface StatementInput {
  /** Subject name (the bundle's file name). */
  name: string;
  /** Lowercase hex SHA-256 of the bundle. */
  digest: string;
  version: string;
  sourceCommit: string;
  sourceUri?: string;
  builderId: string;
}

export interface BuildStatement {
  subjects: { name: string; sha256: string | undefined }[];
  version: string;
  sourceCommit: string | undefined;
  builderId: string | undefined;
}

/** The statement's JSON bytes (member order fixed, so the same inputs give the same bytes). */
export function encodeStatement(s: StatementInput): Uint8Array {
  if (!isHex(s.digest, 32)) throw new BuildError('malformed_statement', 'subject digest must be 64 hex characters');
  const source = s.sourceUri === undefined ? { commit: s.sourceCommit } : { commit: s.sourceCommit, uri: s.sourceUri };
  const dependency =
    s.sourceUri === undefined
      ? { digest: { gitCommit: s.sourceCommit } }
      : { uri: `git+${s.sourceUri}`, digest: { gitCommit: s.sourceCommit } };
  const statement = {
    _type: STATEMENT_TYPE,
    subject: [{ name: s.name, digest: { sha256: s.digest.toLowerCase() } }],
    predicateType: PROVENANCE_TYPE,
    predicate: {
      buildDefinition: {
        buildType: BUILD_TYPE,
        externalParameters: { version: s.version, source },
        resolvedDependencies: [dependency],
      },
      runDetails: { builder: { id: s.builderId } },
    },
  };
  return new TextEncoder().encode(JSON.stringify(statement));
}

function bad(message: string): never {
  throw new BuildError('malformed_statement', message);
}

/**
 * Parse the statement bytes (strict JSON). Requires `_type` Statement v1, a non-empty subject list
 * (each with a name and a digest map of strings), predicateType SLSA Provenance v1 and a version in
 * `buildDefinition.externalParameters.version`. Unknown members are allowed (in-toto's rule:
 * consumers ignore fields they do not understand).
 */
export function parseStatement(payload: Uint8Array): BuildStatement {
  let doc: unknown;
  try {
    doc = parseStrictJson(decodeUtf8(payload), { maxDepth: 32 });
  } catch (e) {
    bad(`the statement is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isJsonObject(doc)) bad('the statement must be a JSON object');
  if (doc._type !== STATEMENT_TYPE) bad(`statement _type must be ${STATEMENT_TYPE}`);
  if (!Array.isArray(doc.subject) || doc.subject.length === 0) bad('statement subject must be a non-empty array');
  const subjects = doc.subject.map((s: unknown, i) => {
    if (!isJsonObject(s) || typeof s.name !== 'string' || !isJsonObject(s.digest))
      bad(`subject[${i}] must have a name and a digest object`);
    for (const [alg, value] of Object.entries(s.digest)) {
      if (typeof value !== 'string') bad(`subject[${i}].digest.${alg} must be a string`);
    }
    const sha = s.digest.sha256;
    if (sha !== undefined && !(typeof sha === 'string' && isHex(sha, 32))) bad(`subject[${i}].digest.sha256 must be 64 hex characters`);
    return { name: s.name, sha256: typeof sha === 'string' ? sha.toLowerCase() : undefined };
  });
  if (doc.predicateType !== PROVENANCE_TYPE) bad(`statement predicateType must be ${PROVENANCE_TYPE}`);
  const p = doc.predicate;
  const def = isJsonObject(p) ? p.buildDefinition : undefined;
  const ext = isJsonObject(def) ? def.externalParameters : undefined;
  const version = isJsonObject(ext) ? ext.version : undefined;
  if (typeof version !== 'string' || version === '') bad('predicate.buildDefinition.externalParameters.version must be a non-empty string');
  const source = isJsonObject(ext) ? ext.source : undefined;
  const commit = isJsonObject(source) && typeof source.commit === 'string' ? source.commit : undefined;
  const run = isJsonObject(p) ? p.runDetails : undefined;
  const builder = isJsonObject(run) ? run.builder : undefined;
  const builderId = isJsonObject(builder) && typeof builder.id === 'string' ? builder.id : undefined;
  return { subjects, version, sourceCommit: commit, builderId };
}

/** True when some subject of the statement carries `digest` as its SHA-256. */
export function hasSubjectDigest(statement: BuildStatement, digest: string): boolean {
  const d = digest.toLowerCase();
  return statement.subjects.some((s) => s.sha256 === d);
}

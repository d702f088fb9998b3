/**
 * Client side of SPEC §6: verify a node's GET /build body against the release key the client pins
 * (never a key the node names). Pure: no I/O.
 *
 * Valid when: the body is {version, running_digest, attestation, node_version}; the attestation is
 * a DSSE envelope with a signature by the release key over PAE(payloadType, payload); the payload
 * type is `application/vnd.in-toto+json`; the payload is an in-toto v1 Statement with a SLSA v1
 * provenance predicate; some subject's sha256 equals `running_digest`; the predicate's version
 * equals `version`; and, when the caller has one (a digest it reproduced by building the source),
 * `running_digest` equals it.
 */
import { isHex } from '../encoding/hex.ts';
import { parseEnvelope, verifyEnvelope } from './dsse.ts';
import { BuildError } from './errors.ts';
import { hasSubjectDigest, IN_TOTO_PAYLOAD_TYPE, parseStatement } from './statement.ts';
import { isJsonObject } from '../encoding/json.ts';

export interface VerifiedBuild {
  version: string;
  runningDigest: string;
  nodeVersion: string;
  /** Key ID (hex SHA-256 of the raw public key) of the release key that signed. */
  keyid: string;
  sourceCommit: string | undefined;
  builderId: string | undefined;
}

/** Verify a GET /build body; throws BuildError with the reason. */
export function verifyBuildBody(body: unknown, releaseKey: Uint8Array, opts: { expectDigest?: string } = {}): VerifiedBuild {
  if (!isJsonObject(body)) throw new BuildError('malformed_response', '/build body is not a JSON object');
  const { version, running_digest: digest, attestation, node_version: nodeVersion } = body;
  if (typeof version !== 'string') throw new BuildError('malformed_response', '/build: version must be a string');
  if (typeof digest !== 'string' || !isHex(digest, 32))
    throw new BuildError('malformed_response', '/build: running_digest must be 64 hex characters');
  if (typeof nodeVersion !== 'string') throw new BuildError('malformed_response', '/build: node_version must be a string');
  const parsed = parseEnvelope(attestation);
  const keyid = verifyEnvelope(parsed, releaseKey);
  if (parsed.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    throw new BuildError(
      'unsupported_payload_type',
      `payloadType is ${JSON.stringify(parsed.payloadType)}, expected ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
  const statement = parseStatement(parsed.payload);
  const running = digest.toLowerCase();
  if (!hasSubjectDigest(statement, running)) {
    throw new BuildError(
      'digest_mismatch',
      `the signed statement does not name running_digest ${running} (it names ${statement.subjects.map((s) => s.sha256 ?? '(none)').join(', ')})`,
    );
  }
  if (statement.version !== version)
    throw new BuildError('version_mismatch', `the node reports version ${version}, the signed statement ${statement.version}`);
  if (opts.expectDigest !== undefined && opts.expectDigest.toLowerCase() !== running) {
    throw new BuildError('unexpected_digest', `running_digest ${running} is not the expected ${opts.expectDigest.toLowerCase()}`);
  }
  return { version, runningDigest: running, nodeVersion, keyid, sourceCommit: statement.sourceCommit, builderId: statement.builderId };
}

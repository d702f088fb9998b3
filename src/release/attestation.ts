/**
 * `serve --build-attestation FILE` (SPEC §6): read the DSSE envelope, check its form and statement,
 * and bind it to the running bundle — its subject digest must equal `running_digest`, and its
 * version the running version — or refuse to start. The node cannot check the signature (it does
 * not know which release key its operators trust); clients do, with the release key they pin
 * (`anchor-witness verify build`). The result is the ready-to-send `/build` body.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { decodeUtf8, parseStrictJson } from '../encoding/json.ts';
import { VERSION } from '../version.ts';
import { parseEnvelope, type DsseEnvelope } from './dsse.ts';
import { BuildError } from './errors.ts';
import { runningBundle, type RunningBundle } from './running.ts';
import { hasSubjectDigest, IN_TOTO_PAYLOAD_TYPE, parseStatement } from './statement.ts';

/** Largest attestation file read (an envelope is a few kilobytes). */
export const MAX_ATTESTATION_BYTES = 1 << 20;

export interface BuildBody {
  version: string;
  running_digest: string;
  attestation: DsseEnvelope;
  node_version: string;
}

/** What the node serves at GET /build. */
export interface BuildInfo {
  body: BuildBody;
  /** `body` serialized once (the route sends these bytes). */
  json: string;
  /** The bundle file the digest is of. */
  file: string;
}

function readSmallFile(path: string): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new BuildError(
      'attestation_unreadable',
      `cannot read build attestation ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(e))}`,
    );
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_ATTESTATION_BYTES)
      throw new BuildError('attestation_unreadable', `build attestation ${path} is larger than ${MAX_ATTESTATION_BYTES} bytes`);
    const buf = new Uint8Array(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/** Parse an attestation file's text into a DSSE envelope (strict JSON). */
export function parseAttestationJson(text: string, source: string): ReturnType<typeof parseEnvelope> {
  let doc: unknown;
  try {
    doc = parseStrictJson(text, { maxDepth: 32 });
  } catch (e) {
    throw new BuildError('malformed_envelope', `${source}: not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseEnvelope(doc);
}

/**
 * Load and bind a build attestation to the running bundle (`running` defaults to this process's
 * bundle). Throws BuildError: `not_bundled`, `attestation_unreadable`, `malformed_envelope`,
 * `unsupported_payload_type`, `malformed_statement`, `digest_mismatch`, `version_mismatch`.
 */
export function loadBuildAttestation(path: string, running: RunningBundle | undefined = runningBundle(), version = VERSION): BuildInfo {
  if (running === undefined) {
    throw new BuildError(
      'not_bundled',
      '--build-attestation needs the bundled build: run `npm run build:bundle`, then start `node dist/anchor-witness.mjs serve …` ' +
        '(run from the TypeScript sources there is no single entry file whose digest the attestation could name)',
    );
  }
  let text: string;
  try {
    text = decodeUtf8(readSmallFile(path));
  } catch (e) {
    if (e instanceof BuildError) throw e;
    throw new BuildError('malformed_envelope', `build attestation ${path} is not UTF-8`);
  }
  const parsed = parseAttestationJson(text, path);
  if (parsed.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    throw new BuildError(
      'unsupported_payload_type',
      `build attestation ${path}: payloadType is ${JSON.stringify(parsed.payloadType)}, expected ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
  const statement = parseStatement(parsed.payload);
  if (!hasSubjectDigest(statement, running.digest)) {
    const named = statement.subjects.map((s) => `${s.name} sha256:${s.sha256 ?? '(none)'}`).join(', ');
    throw new BuildError(
      'digest_mismatch',
      `build attestation ${path} does not match the running bundle: it names ${named}, but this process runs ${basename(running.file)} ` +
        `with sha256:${running.digest} (${running.file}); refusing to start`,
    );
  }
  if (statement.version !== version) {
    throw new BuildError(
      'version_mismatch',
      `build attestation ${path} is for version ${statement.version}, but this bundle is version ${version}; refusing to start`,
    );
  }
  const body: BuildBody = { version, running_digest: running.digest, attestation: parsed.envelope, node_version: process.version };
  return { body, json: JSON.stringify(body), file: running.file };
}

/**
 * Signed build statement commands (SPEC §6, docs/build.md):
 *
 *   anchor-witness build digest [FILE]          SHA-256 (hex) of FILE, default the running bundle
 *   anchor-witness build attest --key RELEASE_KEY [--file BUNDLE] [--out FILE] …
 *                                               DSSE envelope of an in-toto v1 statement for BUNDLE
 *   anchor-witness verify build --url URL --release-key KEY [--expect-digest HEX | --bundle FILE]
 *                                               exit 0 valid; 1 invalid (one-line reason); 2 could not check
 *
 * None of this imports esbuild: bundling is `npm run build:bundle` (src/release/bundle.ts).
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { checkEd25519PublicKey, ed25519PrivateKeyFromPem, ed25519PublicKeyBytes } from '../crypto/ed25519.ts';
import { KeyError } from '../crypto/errors.ts';
import { decodeHex, encodeHex, isHex } from '../encoding/hex.ts';
import { decodeUtf8, parseStrictJson } from '../encoding/json.ts';
import { ProtocolError } from '../errors.ts';
import { readKeyFile } from '../keys/keyfile.ts';
import { VERSION } from '../version.ts';
import { ed25519KeyId, signEnvelope } from '../release/dsse.ts';
import { BuildError } from '../release/errors.ts';
import { fileDigest, runningBundle } from '../release/running.ts';
import { encodeStatement, IN_TOTO_PAYLOAD_TYPE } from '../release/statement.ts';
import { verifyBuildBody } from '../release/verify.ts';
import { CheckFailed } from './errors.ts';
import { unitArg } from './options.ts';
import { readBodyCapped } from '../client/http.ts';

/** Largest /build response read by `verify build`. */
const MAX_BUILD_BODY = 1 << 20;
/** Default builder ID when --builder is not given. */
export const LOCAL_BUILDER = 'urn:anchor-witness:builder:local';

function defaultBundle(what: string): string {
  const running = runningBundle();
  if (running === undefined)
    throw new BuildError('not_bundled', `${what}: not running from the bundle; give the bundle file (e.g. --file dist/anchor-witness.mjs)`);
  return running.file;
}

function git(cwd: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** A remote URL without user:password@ (a token in a remote URL must not end up in a signed, published statement). */
export function withoutCredentials(uri: string | undefined): string | undefined {
  if (uri === undefined || uri === '') return undefined;
  try {
    const u = new URL(uri);
    if (u.username === '' && u.password === '') return uri;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return uri.includes('@') && !/^[\w.-]+@[\w.-]+:/.test(uri) ? undefined : uri; // scp-like git@host:path is fine
  }
}

/** The release public key: 64 hex characters, or a file holding hex or an SPKI PEM public key. */
export function readReleaseKey(text: string): Uint8Array {
  let key: Uint8Array;
  if (isHex(text, 32)) {
    key = decodeHex(text, 32);
  } else if (existsSync(text)) {
    const content = readFileSync(text, 'utf8').trim();
    if (isHex(content, 32)) key = decodeHex(content, 32);
    else if (content.startsWith('-----BEGIN PUBLIC KEY-----'))
      key = ed25519PublicKeyBytes(createPublicKey({ key: content, format: 'pem' }));
    else throw new BuildError('invalid_release_key', `${text}: expected 64 hex characters or an Ed25519 PUBLIC KEY PEM`);
  } else {
    throw new BuildError('invalid_release_key', '--release-key must be 64 hex characters (the Ed25519 public key) or a file holding it');
  }
  checkEd25519PublicKey(key);
  return key;
}

/** Read at most `max` bytes of a response body. */
async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  const body = await readBodyCapped(res, max);
  if (body === undefined) throw new Error(`response larger than ${max} bytes`);
  return body;
}

interface AttestFlags {
  key: string;
  file?: string;
  out?: string;
  releaseVersion: string;
  sourceCommit?: string;
  sourceUri?: string;
  builder: string;
}

interface VerifyFlags {
  url: string;
  releaseKey: string;
  expectDigest?: string;
  bundle?: string;
  timeoutMs: number;
}

export function addBuildCommands(program: Command): void {
  const build = program
    .command('build')
    .description('the signed build statement of docs/protocol.md §6: digest of the bundle, release attestation');

  build
    .command('digest')
    .description('print the SHA-256 (hex) of a bundle file; without FILE, of the bundle this process runs')
    .argument('[file]', 'bundle file (e.g. dist/anchor-witness.mjs)')
    .action((file: string | undefined) => {
      process.stdout.write(fileDigest(file ?? defaultBundle('build digest')) + '\n');
    });

  build
    .command('attest')
    .description('write a DSSE envelope (application/vnd.in-toto+json) of an in-toto v1 statement whose subject is the bundle')
    // Not read from AW_KEY: that variable names the witness key of `serve`, which must never sign a release.
    .addOption(
      new Option(
        '--key <file>',
        'release key (Ed25519 PKCS#8 PEM, mode 0600; create one with: anchor-witness keygen)',
      ).makeOptionMandatory(),
    )
    .option('--file <bundle>', 'the bundle to attest (default: the bundle this process runs)')
    .option('--out <file>', 'write the envelope there (default: stdout)')
    .option('--release-version <v>', 'version recorded in the statement (must be the version the bundle reports)', VERSION)
    .option('--source-commit <sha>', 'source commit (default: git rev-parse HEAD next to the bundle)')
    .option('--source-uri <uri>', 'source repository URI (default: git remote get-url origin, when there is one)')
    .option('--builder <id>', 'builder ID (a URI naming who or what built the bundle)', LOCAL_BUILDER)
    .action((flags: AttestFlags) => {
      const file = resolve(flags.file ?? defaultBundle('build attest'));
      const digest = fileDigest(file);
      const key = ed25519PrivateKeyFromPem(readKeyFile(flags.key));
      const repoDir = dirname(file);
      const commit = flags.sourceCommit ?? git(repoDir, ['rev-parse', 'HEAD']);
      if (commit === undefined)
        throw new BuildError('missing_source_commit', 'no git checkout next to the bundle: give --source-commit SHA');
      if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit))
        throw new BuildError(
          'missing_source_commit',
          `--source-commit must be a 40- or 64-character lowercase hex commit ID, got ${JSON.stringify(commit)}`,
        );
      if (
        flags.sourceCommit === undefined &&
        (git(repoDir, ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no']) ?? '') !== ''
      ) {
        process.stderr.write(`warning: the working tree has uncommitted changes; the bundle may not be the build of ${commit}\n`);
      }
      const sourceUri = flags.sourceUri ?? withoutCredentials(git(repoDir, ['remote', 'get-url', 'origin']));
      const statement = encodeStatement({
        name: basename(file),
        digest,
        version: flags.releaseVersion,
        sourceCommit: commit,
        ...(sourceUri === undefined || sourceUri === '' ? {} : { sourceUri }),
        builderId: flags.builder,
      });
      const text = JSON.stringify(signEnvelope(IN_TOTO_PAYLOAD_TYPE, statement, key), null, 2) + '\n';
      if (flags.out === undefined) process.stdout.write(text);
      else writeFileSync(flags.out, text);
      const publicKey = ed25519PublicKeyBytes(key);
      process.stderr.write(
        `attested ${basename(file)} sha256:${digest} (version ${flags.releaseVersion}, commit ${commit}) with release key ${encodeHex(publicKey)} (keyid ${ed25519KeyId(publicKey)})\n`,
      );
    });

  const verify =
    program.commands.find((c) => c.name() === 'verify') ??
    program.command('verify').description('verify what a node signs: exit 0 valid, non-zero with a one-line reason');
  verify
    .command('build')
    .description(
      "fetch a node's GET /build and verify the release signature and that the signed digest is running_digest (exit 0 valid, 1 invalid, 2 could not check)",
    )
    .requiredOption('--url <url>', 'the node (its base URL; /build is appended)')
    .requiredOption(
      '--release-key <key>',
      'the Ed25519 release public key you trust: 64 hex characters, or a file holding it (hex or PUBLIC KEY PEM)',
    )
    .option('--expect-digest <hex>', 'also require running_digest to be this (e.g. the digest of your own reproducible build)')
    .option('--bundle <file>', 'also require running_digest to be the SHA-256 of this file (a bundle you built from the source)')
    .option('--timeout-ms <ms>', 'request timeout (milliseconds, or 10s, 1m)', unitArg('ms', 1), 10_000)
    .action(async (flags: VerifyFlags) => {
      const fail = (code: number, reason: string): void => {
        process.stderr.write(`anchor-witness verify build: ${reason}\n`);
        process.exitCode = code;
      };
      try {
        // Usage and reachability problems: exit 2 ("could not check").
        let releaseKey: Uint8Array;
        let expectDigest = flags.expectDigest;
        try {
          releaseKey = readReleaseKey(flags.releaseKey);
          if (expectDigest !== undefined && !isHex(expectDigest, 32)) throw new Error('--expect-digest must be 64 hex characters');
          if (flags.bundle !== undefined) {
            const d = fileDigest(flags.bundle);
            if (expectDigest !== undefined && expectDigest.toLowerCase() !== d)
              throw new Error(`--expect-digest and --bundle disagree (${flags.bundle} is ${d})`);
            expectDigest = d;
          }
        } catch (e) {
          throw new CheckFailed(
            e instanceof BuildError || e instanceof KeyError ? e.code : 'invalid_option',
            e instanceof Error ? e.message : String(e),
          );
        }
        const url = flags.url.replace(/\/+$/, '') + '/build';
        let res: Response;
        let bytes: Uint8Array;
        try {
          res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(flags.timeoutMs) });
          bytes = await readCapped(res, MAX_BUILD_BODY);
        } catch (e) {
          throw new CheckFailed('unreachable', `${url}: ${e instanceof Error ? e.message : String(e)}`);
        }
        // From here on, what the node answered: exit 1 when it is not a valid claim.
        let doc: unknown;
        try {
          doc = parseStrictJson(decodeUtf8(bytes), { maxDepth: 32 });
        } catch (e) {
          if (!res.ok) throw new CheckFailed('http_error', `${url} answered ${res.status}`);
          throw new BuildError('malformed_response', `${url}: not JSON: ${e instanceof Error ? e.message : String(e)}`);
        }
        if (res.status === 404 && (doc as { code?: unknown } | null)?.code === 'no_build_attestation') {
          throw new BuildError(
            'no_build_attestation',
            `${url}: the node was started without a build attestation (it makes no build claim)`,
          );
        }
        if (res.status !== 200) throw new CheckFailed('http_error', `${url} answered ${res.status}`);
        const v = verifyBuildBody(doc, releaseKey, expectDigest === undefined ? {} : { expectDigest });
        process.stdout.write(
          `valid: ${flags.url} runs anchor-witness ${v.version} sha256:${v.runningDigest} (node ${v.nodeVersion}), signed by release key ${v.keyid}` +
            `${v.sourceCommit === undefined ? '' : `, source commit ${v.sourceCommit}`}${expectDigest === undefined ? '' : ', matching the expected digest'}\n`,
        );
      } catch (e) {
        if (e instanceof CheckFailed) fail(2, `could not check: ${e.code}: ${e.message}`);
        else if (e instanceof ProtocolError) fail(1, `invalid: ${e.code}: ${e.message}`);
        else fail(2, `could not check: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
}

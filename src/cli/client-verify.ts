/**
 * `anchor-witness verify …`: offline verifiers. Exit 0 and one "OK …" line on stdout when valid;
 * exit 1 and one "INVALID <code>: <reason>" line on stderr when not; exit 2 for unusable input.
 *   verify cosignature FILE    an anchor's witness cosignature, or a checkpoint with cosignature/v1 lines
 *   verify inclusion FILE      a POST /v1/anchor or GET /v1/anchor/{seed} body: cosignature, checkpoint, inclusion, tlog-proof, party signature under --party-key
 *   verify duplicity FILE      a 409 duplicity proof (no keys needed)
 *   verify tlog-proof FILE     a c2sp.org/tlog-proof@v1 file for an anchor or entry
 *   verify finalized FILE      a finalized-anchor bundle against a pinned witness set (--witness-set / --said), or
 *                              the bundle's own with --trust-bundle (else UNPINNED, exit 2)
 *   verify checkpoint FILE     a checkpoint signed note
 *   verify log-equivocation FILE  a monitor's evidence that a log showed two views (portable verifier, async)
 *   verify consistency OLD NEW a newer checkpoint extends an older one, proven from the log's tiles
 */
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { decodeAnchor, decodeDuplicityProof } from '../anchor/codec.ts';
import { verifyDuplicityProof } from '../anchor/duplicity.ts';
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import { encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { parseNote } from '../note/signed-note.ts';
import { ed25519NoteVerifier, parseVkey, type NoteVerifier } from '../note/vkey.ts';
import { tilePath } from '../tlog/tiles.ts';
import { checkConsistencyFromTiles, httpTiles, type TileFetcher } from '../client/consistency.ts';
import { ClientError } from '../client/errors.ts';
import { parseFinalizedBundle, verifyFinalizedBundle } from '../client/finalize.ts';
import { verifyAnchorCosignature, verifyCheckpointNote, verifyCosignedCheckpoint, verifyTlogProofFile } from '../client/offline.ts';
import { parseAnchorResponse, parseCosignature, verifyReceipt, VerificationError } from '../client/verify-anchor.ts';
import { witnessSetSaid } from '../client/witness-set.ts';
import { verifyLogEquivocation } from '../verify/log-equivocation.ts';
import { noteKeyFromVkey } from '../verify/note.ts';
import {
  action,
  addHttpOptions,
  addPartyPinOption,
  addPinOptions,
  CliFailure,
  examples,
  EXIT,
  hexArg,
  httpOptions,
  partyKeysFrom,
  pinFrom,
  readJson,
  readText,
  readWitnessSet,
  type HttpFlags,
  type PinFlags,
} from './client-io.ts';
import { collectList, intArg } from './options.ts';

const ok = (line: string): void => {
  process.stdout.write(`OK ${line}\n`);
};

function anchorFrom(doc: unknown, what: string): Anchor {
  const inner = typeof doc === 'object' && doc !== null ? (doc as { anchor?: unknown }).anchor : undefined;
  const wire = (typeof inner === 'object' && inner !== null ? inner : doc) as AnchorWire;
  try {
    return decodeAnchor(wire, '/anchor');
  } catch (e) {
    throw new VerificationError('malformed_response', `${what}: ${(e as Error).message}`);
  }
}

function vkeys(list: string[] | undefined): NoteVerifier[] {
  return (list ?? []).map((v) => parseVkey(v));
}

/** Note verifiers from --vkey, else from the pinned witness key and origin. */
function logVerifiers(flags: PinFlags & { vkey?: string[] }, originHint: string): { verifiers: NoteVerifier[]; origin?: string } {
  if (flags.vkey !== undefined && flags.vkey.length > 0)
    return { verifiers: vkeys(flags.vkey), ...(flags.origin !== undefined ? { origin: flags.origin } : {}) };
  const pin = pinFrom(flags, flags.witnessName ?? '', originHint);
  return { verifiers: [ed25519NoteVerifier(pin.logOrigin, pin.publicKey)], origin: pin.logOrigin };
}

function originOfNote(text: string): string {
  try {
    return parseCheckpoint(parseNote(text).text).origin;
  } catch (e) {
    throw new VerificationError('checkpoint_invalid', `not a checkpoint note: ${(e as Error).message}`);
  }
}

function tileSource(source: string, http: HttpFlags): TileFetcher {
  if (/^https?:\/\//.test(source)) return httpTiles(source, httpOptions(http));
  if (!existsSync(source) || !statSync(source).isDirectory())
    throw new ClientError('usage', `--tiles must be a witness URL or a directory holding tile/…`);
  return (tile) => {
    const full = join(source, tilePath(tile));
    const p = existsSync(full) ? full : join(source, tilePath({ ...tile, width: 256 }));
    return Promise.resolve(new Uint8Array(readFileSync(p)));
  };
}

export function addVerifyCommands(program: Command): void {
  const verify = examples(
    program.command('verify').description('offline verifiers: exit 0 valid, 1 invalid (one-line reason), 2 unusable input'),
    [
      'anchor-witness verify inclusion response.json --witness-key 8a88e3dd…6f5c --party-key fd172438…f618',
      'anchor-witness verify duplicity proof.json',
      'anchor-witness verify finalized final.json --witness-set set.json',
    ],
  );

  examples(
    addPinOptions(
      verify
        .command('cosignature <file>')
        .description(
          "an anchor's witness cosignature (JSON: {anchor, cosignature}, e.g. a POST /v1/anchor body), or a checkpoint note with cosignature lines (text; give --vkey)",
        )
        .option(
          '--vkey <vkey...>',
          'cosigner vkey(s) for a cosigned checkpoint: type 0x04 (Ed25519 cosignature/v1) or 0x06 (ML-DSA-44 subtree/v1)',
          collectList,
        )
        .option('--log-vkey <vkey...>', "the log's own vkey(s) (type 0x01 or 0x06): its signature must verify too", collectList)
        .option('--quorum <n>', "cosigners needed, counted by name: one witness's vkeys count once (default: every cosigner)", intArg(1)),
    ),
    [
      'anchor-witness verify cosignature response.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
      'anchor-witness verify cosignature response.json --witness-set set.json',
      'anchor-witness verify cosignature cosigned-checkpoint.txt --vkey "w1.example/cosign+1234abcd+BAf…" --log-vkey "example.com/log+…"',
    ],
  ).action(
    action((file: string, opts: PinFlags & { vkey?: string[]; logVkey?: string[]; quorum?: number }) => {
      const text = readText(file);
      if (text.trimStart().startsWith('{')) {
        const doc = readJson(file) as { cosignature?: unknown };
        const anchor = anchorFrom(doc, file);
        const cosignature = parseCosignature(doc.cosignature);
        const pin = pinFrom(opts, cosignature.witness_name, '');
        verifyAnchorCosignature(anchor, cosignature, pin);
        ok(
          `cosignature by ${cosignature.witness_name} (key ${encodeHex(pin.publicKey)}) over anchor seed ${encodeHex(anchor.seedId)} index ${anchor.index}`,
        );
        return;
      }
      if (opts.vkey === undefined || opts.vkey.length === 0)
        throw new ClientError('usage', "a cosigned checkpoint needs --vkey (the cosigners' type 0x04 or 0x06 vkeys)");
      const r = verifyCosignedCheckpoint(text, {
        cosigners: vkeys(opts.vkey),
        ...(opts.logVkey !== undefined ? { log: vkeys(opts.logVkey) } : {}),
        ...(opts.quorum !== undefined ? { quorum: opts.quorum } : {}),
      });
      ok(
        `checkpoint ${r.checkpoint.origin} size ${r.checkpoint.size} cosigned by ${r.cosigners.map((c) => `${c.name} at ${c.timestamp}`).join(', ')}${r.logVerified ? '; log signature verified' : ''}`,
      );
    }),
  );

  examples(
    addPartyPinOption(
      addPinOptions(
        verify
          .command('inclusion <file>')
          .description(
            'a POST /v1/anchor or GET /v1/anchor/{seed} body: signed by the pinned party (--party-key), co-signed, logged and included (cosignature, checkpoint, inclusion proof, tlog-proof) under the pinned witness key',
          ),
      ),
      true,
    ),
    [
      'anchor-witness verify inclusion response.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c --party-key fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618',
      'curl -s https://w1.example/v1/anchor/$SEED | anchor-witness verify inclusion - --witness-set set.json --party-key $PARTY_KEY',
    ],
  ).action(
    action((file: string, opts: PinFlags & { partyKey?: string[] }) => {
      const body = (() => {
        try {
          return parseAnchorResponse(readJson(file));
        } catch (e) {
          if (e instanceof VerificationError) throw e;
          throw new VerificationError('malformed_response', (e as Error).message);
        }
      })();
      const pin = pinFrom(opts, body.cosignature.witness_name, body.inclusion.log_origin);
      const party = partyKeysFrom(opts.partyKey);
      if (party.length === 0)
        throw new ClientError(
          'usage',
          'pin the party: give --party-key HEX (the key of its registry entry); a witness can co-sign and log an anchor it minted itself',
        );
      const v = verifyReceipt(anchorFrom(body, file), body, pin, party);
      ok(
        `anchor seed ${encodeHex(v.anchor.seedId)} index ${v.anchor.index} signed by party key ${encodeHex(v.anchor.sigParty.publicKey)}, co-signed by ${body.cosignature.witness_name} and included at leaf ${v.leafIndex} of ${v.checkpoint.origin} size ${v.treeSize}`,
      );
    }),
  );

  examples(
    verify
      .command('duplicity <file>')
      .description('a duplicity proof (the 409 body): same seed and index, two heads, one party key, both signatures valid'),
    ['anchor-witness verify duplicity proof.json', 'curl -s https://w1.example/v1/duplicity/$SEED | anchor-witness verify duplicity -'],
  ).action(
    action((file: string) => {
      const doc = readJson(file);
      let proof;
      try {
        proof = decodeDuplicityProof(doc);
      } catch (e) {
        throw new VerificationError('duplicity_proof_invalid', `not a duplicity proof: ${(e as Error).message}`);
      }
      const verdict = verifyDuplicityProof(proof);
      if (!verdict.valid) throw new VerificationError('duplicity_proof_invalid', verdict.reason);
      ok(
        `DUPLICITY PROVEN: seed ${encodeHex(proof.seedId)} index ${proof.index}: heads ${encodeHex(proof.anchorA.head)} and ${encodeHex(proof.anchorB.head)} both signed by ${proof.anchorA.sigParty.curve} key ${encodeHex(proof.anchorA.sigParty.publicKey)}`,
      );
    }),
  );

  examples(
    addPinOptions(
      verify
        .command('tlog-proof <file>')
        .description('a c2sp.org/tlog-proof@v1 file (or a response JSON carrying inclusion.tlog_proof and the anchor)')
        .option('--anchor <file>', 'the anchor (JSON) whose cosign message is the entry')
        .option('--entry <file>', 'the raw entry bytes')
        .option('--leaf-hash <hex>', 'the leaf hash (hex)')
        .option('--vkey <vkey...>', "the log's vkey(s) instead of --witness-key", collectList),
    ),
    [
      'anchor-witness verify tlog-proof proof.txt --anchor anchor.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c --origin w1.example/anchors',
      'anchor-witness verify tlog-proof response.json --witness-set set.json',
      'anchor-witness verify tlog-proof proof.txt --entry entry.bin --vkey "example.com/log+1234abcd+Af…"',
    ],
  ).action(
    action((file: string, opts: PinFlags & { anchor?: string; entry?: string; leafHash?: string; vkey?: string[] }) => {
      const text = readText(file);
      let proofText = text;
      let nameHint = '';
      let leaf: { data: Uint8Array } | { hash: Uint8Array } | undefined;
      if (text.trimStart().startsWith('{')) {
        const doc = readJson(file) as { inclusion?: { tlog_proof?: unknown }; cosignature?: { witness_name?: unknown } };
        if (typeof doc.inclusion?.tlog_proof !== 'string')
          throw new VerificationError('malformed_response', `${file}: no inclusion.tlog_proof`);
        proofText = doc.inclusion.tlog_proof;
        if (typeof doc.cosignature?.witness_name === 'string') nameHint = doc.cosignature.witness_name;
        leaf = { data: cosignMessage(anchorFrom(doc, file)) };
      }
      const given = [opts.anchor, opts.entry, opts.leafHash].filter((x) => x !== undefined).length;
      if (given > 1) throw new ClientError('usage', 'give one of --anchor, --entry, --leaf-hash');
      if (opts.anchor !== undefined) leaf = { data: cosignMessage(anchorFrom(readJson(opts.anchor), opts.anchor)) };
      if (opts.entry !== undefined) leaf = { data: new Uint8Array(readFileSync(opts.entry)) };
      if (opts.leafHash !== undefined) leaf = { hash: hexArg(32, '--leaf-hash')(opts.leafHash) };
      if (leaf === undefined) throw new ClientError('usage', 'which entry? give --anchor FILE, --entry FILE or --leaf-hash HEX');
      let origin: string;
      try {
        origin = parseCheckpoint(parseNote(proofText.slice(proofText.indexOf('\n\n') + 2)).text).origin;
      } catch {
        origin = '';
      }
      const { verifiers, origin: pinnedOrigin } = logVerifiers(
        { ...opts, witnessName: opts.witnessName ?? (nameHint || undefined) },
        origin,
      );
      const v = verifyTlogProofFile(proofText, leaf, verifiers, pinnedOrigin);
      ok(`entry at index ${v.index} of ${v.tree.origin} size ${v.tree.size} (root ${encodeBase64(v.tree.rootHash)})`);
    }),
  );

  examples(
    addPartyPinOption(
      verify
        .command('finalized <file>')
        .description(
          'a finalized-anchor bundle: ≥ threshold members of a witness set you pin each co-signed, logged and proved inclusion of the anchor',
        )
        .option('--witness-set <file>', "the witness set you trust; the bundle's set must be the same (same SAID)")
        .option('--said <said>', "the witness-set SAID you expect (e.g. from the party's KEL)")
        .option('--trust-bundle', 'accept the witness set the bundle brings (nothing pinned: whoever made the bundle chose the witnesses)')
        .option('--strict', 'any invalid receipt fails (default: it only fails its member)')
        .option('--json', 'print the typed per-member result as JSON'),
      false,
    ),
    [
      'anchor-witness verify finalized final.json --witness-set set.json',
      'anchor-witness verify finalized final.json --said IFw0M0qVGw4SHgcktXgryb3Kjb8o531JAMm-UOG9yPGi --party-key $PARTY_KEY --strict --json',
      'anchor-witness verify finalized final.json --trust-bundle',
    ],
  ).action(
    action(
      (
        file: string,
        opts: { witnessSet?: string; said?: string; trustBundle?: boolean; partyKey?: string[]; strict?: boolean; json?: boolean },
      ) => {
        const party = partyKeysFrom(opts.partyKey);
        let bundle;
        try {
          bundle = parseFinalizedBundle(readJson(file));
        } catch (e) {
          if (e instanceof ClientError && (e.code === 'bundle_invalid' || e.code === 'witness_set_invalid'))
            throw new VerificationError(e.code, e.message);
          throw e;
        }
        let expected = opts.said;
        if (opts.witnessSet !== undefined) {
          const trusted = witnessSetSaid(readWitnessSet(opts.witnessSet));
          if (expected !== undefined && expected !== trusted) throw new ClientError('usage', '--said and --witness-set disagree');
          expected = trusted;
        }
        const r = verifyFinalizedBundle(bundle, {
          strict: opts.strict === true,
          ...(expected !== undefined ? { expectedSaid: expected } : {}),
          ...(party.length > 0 ? { party } : {}),
        });
        const unpinned = expected === undefined && opts.trustBundle !== true;
        if (opts.json === true)
          process.stdout.write(stringifyJson(unpinned && r.final ? { ...r, final: false, code: 'unpinned', pinned: false } : r) + '\n');
        if (!r.final) throw new VerificationError(r.code, r.reason);
        if (unpinned) {
          // Final only under the set the bundle itself brought: anyone can mint such a set and its receipts.
          throw new CliFailure(
            `UNPINNED: the bundle is final only under the witness set it brings itself (${r.said}); pin the set with --witness-set FILE or --said SAID, or accept the bundle's set with --trust-bundle`,
            EXIT.usage,
          );
        }
        if (opts.json !== true) {
          const bad = r.members.flatMap((m) => (m.status === 'invalid' ? [`${m.name} ${m.code}`] : []));
          const trust = expected === undefined ? " — under the bundle's own witness set (--trust-bundle)" : '';
          ok(
            `anchor seed ${encodeHex(bundle.anchor.seedId)} index ${bundle.anchor.index} is ${r.reason}${bad.length > 0 ? ` (invalid receipts: ${bad.join(', ')})` : ''}${trust}`,
          );
        }
      },
    ),
  );

  examples(
    verify
      .command('log-equivocation <file>')
      .description(
        "a monitor's log-equivocation evidence (docs/protocol.md §6.1): two checkpoints of one log, both signed by its key, same size and two roots, or proven inconsistent (proof hashes from its tiles)",
      )
      .requiredOption('--log-vkey <vkey...>', "the log's key (type 0x01, or 0x06 ML-DSA-44; named after its origin)", collectList),
    ['anchor-witness verify log-equivocation evidence/log-equivocation-3f1c2a9e0b7d4c11.json --log-vkey "w1.example/anchors+1a2b3c4d+AQ…"'],
  ).action(
    action(async (file: string, opts: { logVkey: string[] }) => {
      const doc = readJson(file);
      const keys = await Promise.all(
        opts.logVkey.map(async (v) => {
          try {
            return await noteKeyFromVkey(v);
          } catch (e) {
            throw new ClientError('usage', `--log-vkey ${v}: ${(e as Error).message}`);
          }
        }),
      );
      const r = await verifyLogEquivocation(doc, keys);
      const roots = `${r.a.size}:${encodeBase64(r.a.rootHash)} and ${r.b.size}:${encodeBase64(r.b.rootHash)}`;
      ok(
        r.kind === 'same_size'
          ? `LOG EQUIVOCATION PROVEN: log ${r.origin} signed two trees of size ${r.a.size} (roots ${roots})`
          : `LOG EQUIVOCATION PROVEN: log ${r.origin} signed checkpoints ${roots}, and the larger does not extend the smaller (consistency proof)`,
      );
    }),
  );

  examples(
    addPinOptions(
      verify
        .command('checkpoint <file>')
        .description('a checkpoint signed note under the pinned witness key (or --vkey)')
        .option('--vkey <vkey...>', 'signed-note vkey(s) instead of --witness-key', collectList),
    ),
    [
      'curl -s https://w1.example/log/checkpoint > cp.txt && anchor-witness verify checkpoint cp.txt --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
    ],
  ).action(
    action((file: string, opts: PinFlags & { vkey?: string[] }) => {
      const text = readText(file);
      const { verifiers, origin } = logVerifiers(opts, originOfNote(text));
      const { checkpoint } = verifyCheckpointNote(text, verifiers, origin);
      ok(`checkpoint ${checkpoint.origin} size ${checkpoint.size} root ${encodeBase64(checkpoint.rootHash)}`);
    }),
  );

  addHttpOptions(
    examples(
      addPinOptions(
        verify
          .command('consistency <old> <new>')
          .description("the newer checkpoint extends the older one: consistency computed from the log's tiles")
          .requiredOption('--tiles <url|dir>', 'the witness base URL (tiles at /log/tile/…) or a directory holding tile/…')
          .option('--vkey <vkey...>', 'signed-note vkey(s) instead of --witness-key', collectList),
      ),
      [
        'anchor-witness verify consistency old-cp.txt new-cp.txt --tiles https://w1.example --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
      ],
    ),
  ).action(
    action(async (oldFile: string, newFile: string, opts: PinFlags & HttpFlags & { tiles: string; vkey?: string[] }) => {
      const oldText = readText(oldFile);
      const newText = readText(newFile);
      const { verifiers, origin } = logVerifiers(opts, originOfNote(newText));
      const older = verifyCheckpointNote(oldText, verifiers, origin).checkpoint;
      const newer = verifyCheckpointNote(newText, verifiers, origin).checkpoint;
      if (older.size > newer.size)
        throw new VerificationError(
          'consistency_invalid',
          `rollback: the "new" checkpoint (size ${newer.size}) is smaller than the old one (size ${older.size}); both are signed`,
        );
      const r = await checkConsistencyFromTiles(older, newer, tileSource(opts.tiles, opts));
      if (r.status === 'tiles_mismatch') throw new CliFailure(`UNKNOWN tiles_mismatch: ${r.reason}`, EXIT.usage);
      if (r.status === 'inconsistent') {
        process.stdout.write(
          stringifyJson({
            old_root_from_tiles: encodeBase64(r.evidence.oldRootFromTiles),
            consistency_proof: r.evidence.proof.map(encodeBase64),
          }) + '\n',
        );
        throw new VerificationError(
          'consistency_invalid',
          `INCONSISTENT: the log at size ${newer.size} does not extend the checkpoint of size ${older.size} (evidence printed)`,
        );
      }
      ok(`size ${newer.size} extends size ${older.size} (${r.proof.length}-hash consistency proof from tiles)`);
    }),
  );
}

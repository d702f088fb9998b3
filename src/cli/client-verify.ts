/**
 * `anchor-witness verify …`: offline verifiers, each a thin shell over the verifier core (src/verify).
 * Exit 0 and one "OK …" line on stdout when valid (with --json: one JSON verdict, ./verify-output.ts);
 * exit 1 and one "INVALID <code>: <reason>" line on stderr when not; exit 2 for unusable input.
 *   verify cosignature FILE    an anchor's witness cosignature, or a checkpoint with cosignature/v1 lines
 *   verify inclusion FILE      a POST /v1/anchor or GET /v1/anchor/{seed} body: cosignature, checkpoint, inclusion, tlog-proof, party signature under --party-key
 *   verify duplicity FILE      a 409 duplicity proof (no keys needed)
 *   verify tlog-proof FILE     a c2sp.org/tlog-proof@v1 file for an anchor or entry
 *   verify finalized FILE      a finalized-anchor bundle against a pinned witness set (--witness-set / --said), or
 *                              the bundle's own with --trust-bundle (else UNPINNED, exit 2)
 * and, in ./client-verify-logs.ts:
 *   verify checkpoint FILE     a checkpoint signed note
 *   verify log-equivocation FILE  a monitor's evidence that a log showed two views
 *   verify consistency OLD NEW a newer checkpoint extends an older one, proven from the log's tiles
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { decodeAnchor, decodeDuplicityProof } from '../anchor/codec.ts';
import { cosignMessage } from '../anchor/messages.ts';
import type { Anchor, AnchorWire } from '../anchor/types.ts';
import { encodeBase64 } from '../encoding/base64.ts';
import { encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { parseNote } from '../note/signed-note.ts';
import { verifyDuplicityProof } from '../verify/duplicity.ts';
import { VerificationError, UsageError } from '../verify/errors.ts';
import { parseFinalizedBundle, verifyFinalized } from '../verify/finalize.ts';
import { verifyCosignedCheckpoint } from '../verify/note.ts';
import { parseAnchorResponse, parseCosignature, verifyAnchorCosignature, verifyReceipt } from '../verify/receipt.ts';
import { verifyTlogProof } from '../verify/tlog-proof.ts';
import { witnessSetSaid } from '../verify/witness-set.ts';
import {
  action,
  addPartyPinOption,
  addPinOptions,
  CliFailure,
  examples,
  EXIT,
  hexArg,
  partyKeysFrom,
  pinFrom,
  readJson,
  readText,
  readWitnessSet,
  type PinFlags,
} from './client-io.ts';
import { addLogVerifyCommands, logVerifiers, vkeys } from './client-verify-logs.ts';
import { collectList, intArg } from './options.ts';
import { addJsonOption, verdictAction } from './verify-output.ts';

function anchorFrom(doc: unknown, what: string): Anchor {
  const inner = typeof doc === 'object' && doc !== null ? (doc as { anchor?: unknown }).anchor : undefined;
  const wire = (typeof inner === 'object' && inner !== null ? inner : doc) as AnchorWire;
  try {
    return decodeAnchor(wire, '/anchor');
  } catch (e) {
    throw new VerificationError('malformed_response', `${what}: ${(e as Error).message}`);
  }
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
    addJsonOption(
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
    ),
    [
      'anchor-witness verify cosignature response.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
      'anchor-witness verify cosignature response.json --witness-set set.json',
      'anchor-witness verify cosignature cosigned-checkpoint.txt --vkey "w1.example/cosign+1234abcd+BAf…" --log-vkey "example.com/log+…"',
    ],
  ).action(
    verdictAction('cosignature', async (out, file: string, opts: PinFlags & { vkey?: string[]; logVkey?: string[]; quorum?: number }) => {
      const text = readText(file);
      if (text.trimStart().startsWith('{')) {
        const doc = readJson(file) as { cosignature?: unknown };
        const anchor = anchorFrom(doc, file);
        const cosignature = parseCosignature(doc.cosignature);
        const pin = await pinFrom(opts, cosignature.witness_name, '');
        await verifyAnchorCosignature(anchor, cosignature, pin);
        out.ok(
          `cosignature by ${cosignature.witness_name} (key ${encodeHex(pin.publicKey)}) over anchor seed ${encodeHex(anchor.seedId)} index ${anchor.index}`,
          {
            witness: cosignature.witness_name,
            witness_key: encodeHex(pin.publicKey),
            seed_id: encodeHex(anchor.seedId),
            index: anchor.index,
          },
        );
        return;
      }
      if (opts.vkey === undefined || opts.vkey.length === 0)
        throw new UsageError("a cosigned checkpoint needs --vkey (the cosigners' type 0x04 or 0x06 vkeys)");
      const r = await verifyCosignedCheckpoint(text, {
        cosigners: vkeys(opts.vkey),
        ...(opts.logVkey !== undefined ? { log: vkeys(opts.logVkey) } : {}),
        ...(opts.quorum !== undefined ? { quorum: opts.quorum } : {}),
      });
      out.ok(
        `checkpoint ${r.checkpoint.origin} size ${r.checkpoint.size} cosigned by ${r.cosigners.map((c) => `${c.name} at ${c.timestamp}`).join(', ')}${r.logVerified ? '; log signature verified' : ''}`,
        {
          checkpoint: { origin: r.checkpoint.origin, size: r.checkpoint.size, root_hash: encodeBase64(r.checkpoint.rootHash) },
          cosigners: r.cosigners.map((c) => ({ name: c.name, timestamp: c.timestamp })),
          log_verified: r.logVerified,
        },
      );
    }),
  );

  examples(
    addJsonOption(
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
    ),
    [
      'anchor-witness verify inclusion response.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c --party-key fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618',
      'curl -s https://w1.example/v1/anchor/$SEED | anchor-witness verify inclusion - --witness-set set.json --party-key $PARTY_KEY',
    ],
  ).action(
    verdictAction('inclusion', async (out, file: string, opts: PinFlags & { partyKey?: string[] }) => {
      const body = (() => {
        try {
          return parseAnchorResponse(readJson(file));
        } catch (e) {
          if (e instanceof VerificationError) throw e;
          throw new VerificationError('malformed_response', (e as Error).message);
        }
      })();
      const pin = await pinFrom(opts, body.cosignature.witness_name, body.inclusion.log_origin);
      const party = partyKeysFrom(opts.partyKey);
      if (party.length === 0)
        throw new UsageError(
          'pin the party: give --party-key HEX (the key of its registry entry); a witness can co-sign and log an anchor it minted itself',
        );
      const v = await verifyReceipt(anchorFrom(body, file), body, pin, party);
      out.ok(
        `anchor seed ${encodeHex(v.anchor.seedId)} index ${v.anchor.index} signed by party key ${encodeHex(v.anchor.sigParty.publicKey)}, co-signed by ${body.cosignature.witness_name} and included at leaf ${v.leafIndex} of ${v.checkpoint.origin} size ${v.treeSize}`,
        {
          seed_id: encodeHex(v.anchor.seedId),
          index: v.anchor.index,
          party_key: encodeHex(v.anchor.sigParty.publicKey),
          witness: body.cosignature.witness_name,
          log_origin: v.checkpoint.origin,
          leaf_index: v.leafIndex,
          tree_size: v.treeSize,
        },
      );
    }),
  );

  examples(
    addJsonOption(
      verify
        .command('duplicity <file>')
        .description('a duplicity proof (the 409 body): same seed and index, two heads, one party key, both signatures valid'),
    ),
    ['anchor-witness verify duplicity proof.json', 'curl -s https://w1.example/v1/duplicity/$SEED | anchor-witness verify duplicity -'],
  ).action(
    verdictAction('duplicity', async (out, file: string) => {
      const doc = readJson(file);
      let proof;
      try {
        proof = decodeDuplicityProof(doc);
      } catch (e) {
        throw new VerificationError('duplicity_proof_invalid', `not a duplicity proof: ${(e as Error).message}`);
      }
      try {
        await verifyDuplicityProof(doc);
      } catch (e) {
        if (!(e instanceof VerificationError)) throw e;
        throw new VerificationError('duplicity_proof_invalid', e.message);
      }
      out.ok(
        `DUPLICITY PROVEN: seed ${encodeHex(proof.seedId)} index ${proof.index}: heads ${encodeHex(proof.anchorA.head)} and ${encodeHex(proof.anchorB.head)} both signed by ${proof.anchorA.sigParty.curve} key ${encodeHex(proof.anchorA.sigParty.publicKey)}`,
        {
          proven: true,
          seed_id: encodeHex(proof.seedId),
          index: proof.index,
          heads: [encodeHex(proof.anchorA.head), encodeHex(proof.anchorB.head)],
          party_key: { curve: proof.anchorA.sigParty.curve, public_key: encodeHex(proof.anchorA.sigParty.publicKey) },
        },
      );
    }),
  );

  examples(
    addJsonOption(
      addPinOptions(
        verify
          .command('tlog-proof <file>')
          .description('a c2sp.org/tlog-proof@v1 file (or a response JSON carrying inclusion.tlog_proof and the anchor)')
          .option('--anchor <file>', 'the anchor (JSON) whose cosign message is the entry')
          .option('--entry <file>', 'the raw entry bytes')
          .option('--leaf-hash <hex>', 'the leaf hash (hex)')
          .option('--vkey <vkey...>', "the log's vkey(s) instead of --witness-key", collectList),
      ),
    ),
    [
      'anchor-witness verify tlog-proof proof.txt --anchor anchor.json --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c --origin w1.example/anchors',
      'anchor-witness verify tlog-proof response.json --witness-set set.json',
      'anchor-witness verify tlog-proof proof.txt --entry entry.bin --vkey "example.com/log+1234abcd+Af…"',
    ],
  ).action(
    verdictAction(
      'tlog-proof',
      async (out, file: string, opts: PinFlags & { anchor?: string; entry?: string; leafHash?: string; vkey?: string[] }) => {
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
        if (given > 1) throw new UsageError('give one of --anchor, --entry, --leaf-hash');
        if (opts.anchor !== undefined) leaf = { data: cosignMessage(anchorFrom(readJson(opts.anchor), opts.anchor)) };
        if (opts.entry !== undefined) leaf = { data: new Uint8Array(readFileSync(opts.entry)) };
        if (opts.leafHash !== undefined) leaf = { hash: hexArg(32, '--leaf-hash')(opts.leafHash) };
        if (leaf === undefined) throw new UsageError('which entry? give --anchor FILE, --entry FILE or --leaf-hash HEX');
        let origin: string;
        try {
          origin = parseCheckpoint(parseNote(proofText.slice(proofText.indexOf('\n\n') + 2)).text).origin;
        } catch {
          origin = '';
        }
        const { verifiers, origin: pinnedOrigin } = await logVerifiers(
          { ...opts, witnessName: opts.witnessName ?? (nameHint || undefined) },
          origin,
        );
        const v = await verifyTlogProof(proofText, leaf, verifiers, pinnedOrigin);
        out.ok(`entry at index ${v.index} of ${v.tree.origin} size ${v.tree.size} (root ${encodeBase64(v.tree.rootHash)})`, {
          index: v.index,
          checkpoint: { origin: v.tree.origin, size: v.tree.size, root_hash: encodeBase64(v.tree.rootHash) },
        });
      },
    ),
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
      async (
        file: string,
        opts: { witnessSet?: string; said?: string; trustBundle?: boolean; partyKey?: string[]; strict?: boolean; json?: boolean },
      ) => {
        const party = partyKeysFrom(opts.partyKey);
        const bundle = await parseFinalizedBundle(readJson(file));
        let expected = opts.said;
        if (opts.witnessSet !== undefined) {
          const trusted = await witnessSetSaid(await readWitnessSet(opts.witnessSet));
          if (expected !== undefined && expected !== trusted) throw new UsageError('--said and --witness-set disagree');
          expected = trusted;
        }
        // The set is pinned here (expected) or knowingly the bundle's own (--trust-bundle, or UNPINNED below).
        const r = await verifyFinalized(bundle.anchor, bundle.witnessSet, bundle.receipts, {
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
          process.stdout.write(
            `OK anchor seed ${encodeHex(bundle.anchor.seedId)} index ${bundle.anchor.index} is ${r.reason}${bad.length > 0 ? ` (invalid receipts: ${bad.join(', ')})` : ''}${trust}\n`,
          );
        }
      },
    ),
  );

  addLogVerifyCommands(verify);
}

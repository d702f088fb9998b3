/**
 * `anchor-witness verify checkpoint|consistency|log-equivocation`: the log verifiers (checkpoint
 * notes under a pinned key, consistency from tiles, a monitor's equivocation evidence), and the
 * note keys the other verify subcommands share. Every check is the verifier core's (src/verify).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { encodeBase64 } from '../encoding/base64.ts';
import { stringifyJson } from '../encoding/json.ts';
import { parseCheckpoint } from '../note/checkpoint.ts';
import { parseNote } from '../note/signed-note.ts';
import { ed25519NoteVerifier, parseVkey, type NoteVerifier } from '../note/vkey.ts';
import { tilePath } from '../tlog/tiles.ts';
import { checkConsistencyFromTiles, httpTiles, type TileFetcher } from '../client/consistency.ts';
import { VerificationError, UsageError } from '../verify/errors.ts';
import { verifyLogEquivocation } from '../verify/log-equivocation.ts';
import { noteKeyFromVkey, verifyCheckpoint } from '../verify/note.ts';
import {
  addHttpOptions,
  addPinOptions,
  CliFailure,
  examples,
  EXIT,
  httpOptions,
  pinFrom,
  readText,
  readJson,
  type HttpFlags,
  type PinFlags,
} from './client-io.ts';
import { collectList } from './options.ts';
import { addJsonOption, verdictAction } from './verify-output.ts';

/** Note keys from --vkey / --log-vkey text (a malformed vkey is unusable input). */
export function vkeys(list: string[] | undefined): NoteVerifier[] {
  return (list ?? []).map((v) => parseVkey(v));
}

/** Note keys from --vkey, else from the pinned witness key and origin. */
export async function logVerifiers(
  flags: PinFlags & { vkey?: string[] },
  originHint: string,
): Promise<{ verifiers: NoteVerifier[]; origin?: string }> {
  if (flags.vkey !== undefined && flags.vkey.length > 0)
    return { verifiers: vkeys(flags.vkey), ...(flags.origin !== undefined ? { origin: flags.origin } : {}) };
  const pin = await pinFrom(flags, flags.witnessName ?? '', originHint);
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
    throw new UsageError(`--tiles must be a witness URL or a directory holding tile/…`);
  return (tile) => {
    const full = join(source, tilePath(tile));
    const p = existsSync(full) ? full : join(source, tilePath({ ...tile, width: 256 }));
    return Promise.resolve(new Uint8Array(readFileSync(p)));
  };
}

const checkpointJson = (c: { origin: string; size: number; rootHash: Uint8Array }) => ({
  origin: c.origin,
  size: c.size,
  root_hash: encodeBase64(c.rootHash),
});

export function addLogVerifyCommands(verify: Command): void {
  examples(
    addJsonOption(
      verify
        .command('log-equivocation <file>')
        .description(
          "a monitor's log-equivocation evidence (docs/protocol.md §6.1): two checkpoints of one log, both signed by its key, same size and two roots, or proven inconsistent (proof hashes from its tiles)",
        )
        .requiredOption('--log-vkey <vkey...>', "the log's key (type 0x01, or 0x06 ML-DSA-44; named after its origin)", collectList),
    ),
    ['anchor-witness verify log-equivocation evidence/log-equivocation-3f1c2a9e0b7d4c11.json --log-vkey "w1.example/anchors+1a2b3c4d+AQ…"'],
  ).action(
    verdictAction('log-equivocation', async (out, file: string, opts: { logVkey: string[] }) => {
      const doc = readJson(file);
      const keys = await Promise.all(
        opts.logVkey.map(async (v) => {
          try {
            return await noteKeyFromVkey(v);
          } catch (e) {
            throw new UsageError(`--log-vkey ${v}: ${(e as Error).message}`);
          }
        }),
      );
      const r = await verifyLogEquivocation(doc, keys);
      const roots = `${r.a.size}:${encodeBase64(r.a.rootHash)} and ${r.b.size}:${encodeBase64(r.b.rootHash)}`;
      out.ok(
        r.kind === 'same_size'
          ? `LOG EQUIVOCATION PROVEN: log ${r.origin} signed two trees of size ${r.a.size} (roots ${roots})`
          : `LOG EQUIVOCATION PROVEN: log ${r.origin} signed checkpoints ${roots}, and the larger does not extend the smaller (consistency proof)`,
        { proven: true, kind: r.kind, origin: r.origin, a: checkpointJson(r.a), b: checkpointJson(r.b) },
      );
    }),
  );

  examples(
    addJsonOption(
      addPinOptions(
        verify
          .command('checkpoint <file>')
          .description('a checkpoint signed note under the pinned witness key (or --vkey)')
          .option('--vkey <vkey...>', 'signed-note vkey(s) instead of --witness-key', collectList),
      ),
    ),
    [
      'curl -s https://w1.example/log/checkpoint > cp.txt && anchor-witness verify checkpoint cp.txt --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
    ],
  ).action(
    verdictAction('checkpoint', async (out, file: string, opts: PinFlags & { vkey?: string[] }) => {
      const text = readText(file);
      const { verifiers, origin } = await logVerifiers(opts, originOfNote(text));
      const { checkpoint } = await verifyCheckpoint(text, verifiers, origin);
      out.ok(`checkpoint ${checkpoint.origin} size ${checkpoint.size} root ${encodeBase64(checkpoint.rootHash)}`, {
        checkpoint: checkpointJson(checkpoint),
      });
    }),
  );

  addHttpOptions(
    examples(
      addJsonOption(
        addPinOptions(
          verify
            .command('consistency <old> <new>')
            .description("the newer checkpoint extends the older one: consistency computed from the log's tiles")
            .requiredOption('--tiles <url|dir>', 'the witness base URL (tiles at /log/tile/…) or a directory holding tile/…')
            .option('--vkey <vkey...>', 'signed-note vkey(s) instead of --witness-key', collectList),
        ),
      ),
      [
        'anchor-witness verify consistency old-cp.txt new-cp.txt --tiles https://w1.example --witness-key 8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c',
      ],
    ),
  ).action(
    verdictAction(
      'consistency',
      async (out, oldFile: string, newFile: string, opts: PinFlags & HttpFlags & { tiles: string; vkey?: string[] }) => {
        const oldText = readText(oldFile);
        const newText = readText(newFile);
        const { verifiers, origin } = await logVerifiers(opts, originOfNote(newText));
        const older = (await verifyCheckpoint(oldText, verifiers, origin)).checkpoint;
        const newer = (await verifyCheckpoint(newText, verifiers, origin)).checkpoint;
        if (older.size > newer.size)
          throw new VerificationError(
            'consistency_invalid',
            `rollback: the "new" checkpoint (size ${newer.size}) is smaller than the old one (size ${older.size}); both are signed`,
          );
        const r = await checkConsistencyFromTiles(older, newer, tileSource(opts.tiles, opts));
        if (r.status === 'tiles_mismatch') throw new CliFailure(`UNKNOWN tiles_mismatch: ${r.reason}`, EXIT.usage);
        if (r.status === 'inconsistent') {
          const evidence = {
            old_root_from_tiles: encodeBase64(r.evidence.oldRootFromTiles),
            consistency_proof: r.evidence.proof.map(encodeBase64),
          };
          const reason = `INCONSISTENT: the log at size ${newer.size} does not extend the checkpoint of size ${older.size} (evidence printed)`;
          if (!out.json) process.stdout.write(stringifyJson(evidence) + '\n');
          throw out.invalid('consistency_invalid', reason, { evidence });
        }
        out.ok(`size ${newer.size} extends size ${older.size} (${r.proof.length}-hash consistency proof from tiles)`, {
          old: checkpointJson(older),
          new: checkpointJson(newer),
          proof_hashes: r.proof.length,
        });
      },
    ),
  );
}

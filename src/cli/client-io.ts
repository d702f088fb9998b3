/** Shared plumbing of the client subcommands: input files, pins, exit codes, examples in --help. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { decodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { parseJsonBody, RESPONSE_CAPS, type HttpOptions } from '../client/http.ts';
import { VerificationError, UsageError } from '../verify/errors.ts';
import type { PinnedPartyKey, PinnedWitnessBytes as PinnedWitness } from '../verify/receipt.ts';
import { findMember, parseWitnessSet, type WitnessSet } from '../verify/witness-set.ts';
import { collectList, intArg, unitArg } from './options.ts';

/** Exit codes of the client subcommands. */
export const EXIT = { ok: 0, finding: 1, usage: 2 } as const;

/** A failure with its exit code and one-line message. */
export class CliFailure extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.finding) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Wrap an action: a CliFailure or a VerificationError exits 1 with its line; a VerificationError `usage` and other errors exit 2. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      if (e instanceof CliFailure) {
        process.stderr.write(e.message + '\n');
        process.exitCode = e.exitCode;
      } else if (e instanceof UsageError) {
        // The inputs cannot be judged (e.g. one cosigner key under two names): unusable input, not a verdict.
        process.stderr.write(`anchor-witness: usage: ${oneLine(e.message)}\n`);
        process.exitCode = EXIT.usage;
      } else if (e instanceof VerificationError) {
        process.stderr.write(`INVALID ${e.code}: ${oneLine(e.message)}\n`);
        process.exitCode = EXIT.finding;
      } else if (e instanceof ProtocolError) {
        process.stderr.write(`anchor-witness: ${e.code}: ${oneLine(e.message)}\n`);
        process.exitCode = EXIT.usage;
      } else {
        process.stderr.write(`anchor-witness: ${oneLine(e instanceof Error ? e.message : String(e))}\n`);
        process.exitCode = EXIT.usage;
      }
    }
  };
}

export const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ');

/** Read a file as text ("-" = standard input). */
export function readText(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return parseJsonBody(text);
  } catch (e) {
    throw new UsageError(`${path}: ${(e as Error).message}`);
  }
}

/** A witness set file the user gives: an invalid one is unusable input (exit 2), not a verdict. */
export async function readWitnessSet(path: string): Promise<WitnessSet> {
  const doc = readJson(path);
  try {
    return await parseWitnessSet(doc);
  } catch (e) {
    if (e instanceof VerificationError && e.code === 'witness_set_invalid') throw usageFailure(e);
    throw e;
  }
}

/** A VerificationError about the user's own input (a witness set they built or gave), reported as unusable input. */
export function usageFailure(e: VerificationError): CliFailure {
  return new CliFailure(`anchor-witness: ${e.code}: ${oneLine(e.message)}`, EXIT.usage);
}

export function hexArg(bytes: number, what: string) {
  return (text: string): Uint8Array => {
    try {
      return decodeHex(text, bytes);
    } catch {
      throw new UsageError(`${what} must be ${bytes} bytes of hex`);
    }
  };
}

export interface PinFlags {
  witnessKey?: string;
  witnessName?: string;
  origin?: string;
  witnessSet?: string;
}

/** The witness identity to verify under: a witness-set member (by name), or --witness-key [--origin]. */
export async function pinFrom(flags: PinFlags, nameHint: string, originHint: string): Promise<PinnedWitness> {
  if (flags.witnessSet !== undefined) {
    const set = await readWitnessSet(flags.witnessSet);
    const name = flags.witnessName ?? nameHint;
    // A file that names no witness (a bare tlog-proof or checkpoint) is matched by its log origin.
    const m = name !== '' ? findMember(set, name) : set.members.find((x) => x.logOrigin === originHint);
    if (m === undefined)
      throw new VerificationError(
        'wrong_witness',
        name !== ''
          ? `${name} is not a member of the witness set`
          : `no member of the witness set has log origin ${JSON.stringify(originHint)}`,
      );
    return { name: m.name, publicKey: m.publicKey, logOrigin: m.logOrigin };
  }
  if (flags.witnessKey === undefined)
    throw new UsageError('pin the witness: give --witness-key HEX (and optionally --origin) or --witness-set FILE');
  const pin: PinnedWitness = { publicKey: hexArg(32, '--witness-key')(flags.witnessKey), logOrigin: flags.origin ?? originHint };
  if (flags.witnessName !== undefined) pin.name = flags.witnessName;
  return pin;
}

export function addPinOptions(cmd: Command): Command {
  return cmd
    .option('--witness-key <hex>', 'the witness public key to verify under (Ed25519, 64 hex chars)')
    .option('--witness-name <name>', 'require this witness name (or pick this member of --witness-set)')
    .option('--origin <origin>', "the witness's log origin (default: the one the file names; the key must sign it anyway)")
    .option('--witness-set <file>', 'pin the witness from a witness set (member named by the file)');
}

export interface HttpFlags {
  timeoutMs?: number;
  retries?: number;
  maxResponseBytes?: number;
}

/**
 * Party keys from `--party-key HEX` (repeatable: a registry entry's current keys, any one may
 * sign). The curve follows from the length: 32 bytes Ed25519, 33 bytes (compressed SEC1) P-256;
 * a `ed25519:`/`p256:` prefix is accepted.
 */
export function partyKeysFrom(list: readonly string[] | undefined): PinnedPartyKey[] {
  return (list ?? []).map((text) => {
    const m = /^(?:(ed25519|p256):)?([0-9a-fA-F]+)$/.exec(text);
    const bytes = m === null ? undefined : decodeHexOrUndefined(m[2]!);
    const curve = m?.[1] ?? (bytes?.length === 32 ? 'ed25519' : bytes?.length === 33 ? 'p256' : undefined);
    if (bytes === undefined || curve === undefined || bytes.length !== (curve === 'ed25519' ? 32 : 33)) {
      throw new UsageError(
        `--party-key must be a party public key: 64 hex chars (Ed25519) or 66 (P-256 compressed), optionally prefixed ed25519: or p256:`,
      );
    }
    return { curve: curve as PinnedPartyKey['curve'], publicKey: bytes };
  });
}

function decodeHexOrUndefined(text: string): Uint8Array | undefined {
  try {
    return decodeHex(text);
  } catch {
    return undefined;
  }
}

export function addPartyPinOption(cmd: Command, required: boolean): Command {
  return cmd.option(
    '--party-key <hex...>',
    required
      ? "the party's public key the anchor must be signed by (repeatable: its registry entry's current keys; required)"
      : "the party's public key the anchor must be signed by (repeatable: its registry entry's current keys)",
    collectList,
  );
}

export function addHttpOptions(cmd: Command): Command {
  return cmd
    .option('--timeout-ms <ms>', 'per-request timeout (milliseconds, or 10s, 1m)', unitArg('ms', 1, 600_000), 10_000)
    .option('--retries <n>', 'retries on 503/429 (Retry-After honoured), timeouts and 5xx', intArg(0, 20), 3)
    .option(
      '--max-response-bytes <n>',
      'refuse JSON response bodies longer than this (response_too_large); checkpoints (64 KiB) and tiles keep their own caps',
      intArg(1024, 1 << 30),
      RESPONSE_CAPS.json,
    );
}

export function httpOptions(flags: HttpFlags): HttpOptions {
  return {
    timeoutMs: flags.timeoutMs ?? 10_000,
    retries: flags.retries ?? 3,
    maxResponseBytes: flags.maxResponseBytes ?? RESPONSE_CAPS.json,
    headers: { 'user-agent': 'anchor-witness-client' },
  };
}

/** Append an "Examples:" block to a command's --help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

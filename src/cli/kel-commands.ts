/**
 * `anchor-witness kel verify PATH…` and `anchor-witness kel import-git --git REPO --out DIR`
 * (SPEC §3.5 "Tools"): check KEL documents the way the witness would (no kel_tips: a fresh start),
 * and turn an upstream registry repository into a `dir:` source. `kel init | rotate | delegate`
 * make test KELs in a `dir:` source (src/cli/kel-author.ts).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomic } from '../client/files.ts';
import { encodeHex } from '../encoding/hex.ts';
import { DEFAULT_KEL_LIMITS, evaluateKels, type KelLimits, type RawKel } from '../keri/index.ts';
import { readKelDirectory, readKelFile } from '../registry/dir-source.ts';
import { readKelRepository } from '../registry/git-source.ts';
import { intArg } from './options.ts';
import { delegateKel, initKel, rotateKel, type KelChange } from './kel-author.ts';
import { KelToolError } from './errors.ts';
import { addKelPullCommand } from './kel-pull.ts';
import { progress, type Progress } from './progress.ts';
import { addKelForgetCommand } from './kel-forget.ts';

/** One line of `kel verify`. */
export interface KelVerifyLine {
  prefix: string;
  status: 'accepted' | 'pending' | 'invalid';
  s: number | null;
  d: string | null;
  keys: { curve: 'ed25519' | 'p256'; public_key: string }[];
  delegator: string | null;
  reason: string | null;
}

/** Evaluate the KELs at `paths` (files, or directories read as a `dir:` source) together. */
export async function verifyKelPaths(paths: readonly string[], limits: KelLimits, shown: Progress | null = null): Promise<KelVerifyLine[]> {
  const kels = new Map<string, RawKel>();
  for (const [i, p] of paths.entries()) {
    if (statSync(p).isDirectory()) {
      const read = await (shown?.during(`reading ${p}`, () => readKelDirectory(p, limits)) ?? readKelDirectory(p, limits));
      for (const [prefix, kel] of read.kels) kels.set(prefix, kel);
    } else {
      const kel = await readKelFile(p, limits);
      kels.set(kel.prefix, kel);
    }
    shown?.update(i + 1, paths.length, 'read');
  }
  shown?.update(kels.size, undefined, 'verifying KELs:');
  const { evaluations } = evaluateKels(kels, null, new Map());
  shown?.done();
  return [...evaluations.values()]
    .sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0))
    .map((e) => ({
      prefix: e.prefix,
      status: e.status,
      s: e.state?.s ?? null,
      d: e.state?.d ?? null,
      keys: (e.state?.keys ?? []).map((k) => ({ curve: k.curve, public_key: encodeHex(k.raw) })),
      delegator: e.state?.delegator ?? null,
      reason: e.reason,
    }));
}

/** Write one `<prefix>.kel.json` per identifier of the repository (renamed into place); returns what was written and skipped. */
export async function importGitKels(
  repo: string,
  out: string,
  limits: KelLimits,
  shown: Progress | null = null,
): Promise<{ written: string[]; skipped: { prefix: string; reason: string; detail: string }[] }> {
  const read = await (shown?.during(`reading ${repo}`, () => readKelRepository(repo, limits)) ?? readKelRepository(repo, limits));
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  const skipped: { prefix: string; reason: string; detail: string }[] = [];
  const all = [...read.kels].sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [i, [prefix, kel]] of all.entries()) {
    shown?.update(i + 1, all.length, 'wrote');
    if (kel.defect !== undefined) {
      skipped.push({ prefix, reason: kel.defect.reason, detail: kel.defect.detail });
      continue;
    }
    const doc = { prefix, events: kel.events, attachments: kel.attachments };
    writeFileAtomic(join(out, `${prefix}.kel.json`), JSON.stringify(doc) + '\n', 0o644);
    written.push(prefix);
  }
  shown?.done();
  return { written, skipped };
}

/** `--prefix` and `--delegator` take a prefix or its `did:keri:` form. */
const prefixArg = (text: string): string => text.replace(/^did:keri:/, '');

interface AuthorFlags {
  dir: string;
  keys: string;
}

/** Create both directories (the key directory 0700) and refuse one inside the other's place. */
function authorDirs(o: AuthorFlags): AuthorFlags {
  if (resolve(o.dir) === resolve(o.keys))
    throw new KelToolError('kel_keys_in_source', `--keys ${o.keys} is the dir: source itself: keep the seeds in another directory`);
  mkdirSync(o.dir, { recursive: true });
  mkdirSync(o.keys, { recursive: true, mode: 0o700 });
  return o;
}

const printChange = (c: KelChange): void => {
  process.stdout.write(JSON.stringify(c) + '\n');
};

function addAuthorCommands(kel: Command): void {
  const withDirs = (c: Command): Command =>
    c
      .requiredOption('--dir <dir>', 'the dir: source holding <prefix>.kel.json files (created when missing)')
      .requiredOption('--keys <dir>', 'where the seeds are kept, one <prefix>.kel-keys.json (0600) per identifier; not the --dir source');
  withDirs(
    kel
      .command('init')
      .description(
        'create a test identifier: a one-key Ed25519 KEL (icp) written as <prefix>.kel.json, its seeds in a key file; prints one JSON line',
      ),
  ).action((o: AuthorFlags) => {
    const d = authorDirs(o);
    printChange(initKel(d.dir, d.keys));
  });
  withDirs(
    kel
      .command('rotate')
      .description(
        "rotate a test identifier to its committed next key (rot, or drt anchored by its delegator when the delegator's keys are in --keys)",
      )
      .requiredOption('--prefix <prefix>', 'the identifier (prefix or did:keri:prefix) made by kel init or kel delegate', prefixArg),
  ).action((o: AuthorFlags & { prefix: string }) => {
    const d = authorDirs(o);
    printChange(rotateKel(d.dir, d.keys, o.prefix));
  });
  withDirs(
    kel
      .command('delegate')
      .description("create a test agent delegated by --delegator (dip) and add the delegator's anchoring seal (ixn) to the delegator's KEL")
      .requiredOption('--delegator <prefix>', 'the delegator (prefix or did:keri:prefix), made by kel init here', prefixArg),
  ).action((o: AuthorFlags & { delegator: string }) => {
    const d = authorDirs(o);
    printChange(delegateKel(d.dir, d.keys, o.delegator));
  });
}

export function addKelCommands(program: Command): void {
  const kel = program.command('kel').description('key event logs as a party registry source (docs/protocol.md §3.5)');
  kel
    .command('verify')
    .description('verify KEL files (or dir: directories) together; one JSON line per identifier; exit 0 iff all are accepted')
    .argument('<paths...>', 'KEL files (<prefix>.kel.json) or directories of them')
    .option('--kel-max-events <n>', 'most events one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxEvents)
    .option('--kel-max-bytes <n>', 'most bytes one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxBytes)
    .action(async (paths: string[], o: { kelMaxEvents: number; kelMaxBytes: number }) => {
      const lines = await verifyKelPaths(paths, { maxEvents: o.kelMaxEvents, maxBytes: o.kelMaxBytes }, progress('kel verify'));
      for (const l of lines) process.stdout.write(JSON.stringify(l) + '\n');
      process.exitCode = lines.length > 0 && lines.every((l) => l.status === 'accepted') ? 0 : 1;
    });
  kel
    .command('import-git')
    .description('write one <prefix>.kel.json per identifier of an upstream registry repository (refs/auths/*), without verifying')
    .requiredOption('--git <repo>', 'the repository (kept fresh with: git fetch URL "+refs/auths/*:refs/auths/*")')
    .requiredOption('--out <dir>', 'the dir: source to write (created when missing)')
    .option('--kel-max-events <n>', 'most events one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxEvents)
    .option('--kel-max-bytes <n>', 'most bytes one KEL may have', intArg(1), DEFAULT_KEL_LIMITS.maxBytes)
    .action(async (o: { git: string; out: string; kelMaxEvents: number; kelMaxBytes: number }) => {
      const r = await importGitKels(o.git, o.out, { maxEvents: o.kelMaxEvents, maxBytes: o.kelMaxBytes }, progress('kel import-git'));
      for (const s of r.skipped) process.stderr.write(`skipped ${s.prefix}: ${s.reason}: ${s.detail}\n`);
      process.stdout.write(`wrote ${r.written.length} KEL file(s) to ${o.out}\n`);
    });
  addAuthorCommands(kel);
  addKelPullCommand(kel);
  addKelForgetCommand(kel);
}

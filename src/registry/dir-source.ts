/**
 * The `dir:` KEL source (SPEC §3.5): one `<prefix>.kel.json` per identifier, other names ignored.
 * Hostile-input rules: names `^[A-Za-z0-9_-]{44}\.kel\.json$` only; lstat first and regular files
 * only (no symlinks, FIFOs, devices, directories), opened with O_NOFOLLOW|O_NONBLOCK and checked
 * again on the open descriptor (a file swapped in between is refused, never blocks); each at most
 * `maxBytes`, read with that cap.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseKelDocument } from '../keri/index.ts';
import { KelSourceError } from './errors.ts';
import { unreadableKel, type KelLimits, type KelReason, type KelSourceRead, type RawKel } from './source.ts';

export const KEL_FILE_PATTERN = /^([A-Za-z0-9_-]{44})\.kel\.json$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

type FileRead = { text: string } | { reason: 'oversize' | 'malformed'; detail: string } | 'gone';

async function readCapped(path: string, name: string, maxBytes: number): Promise<FileRead> {
  let st;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
  if (!st.isFile()) return { reason: 'malformed', detail: `${name} is not a regular file (symlink, FIFO, device or directory)` };
  if (st.size > maxBytes) return { reason: 'oversize', detail: `${name} is ${st.size} bytes (max ${maxBytes})` };
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'gone';
    if (code === 'ELOOP' || code === 'ENXIO') return { reason: 'malformed', detail: `${name} is not a regular file` };
    throw e;
  }
  try {
    const fst = await fh.stat();
    if (!fst.isFile()) return { reason: 'malformed', detail: `${name} is not a regular file` };
    const buf = Buffer.alloc(Math.min(maxBytes, Math.max(fst.size, 0)) + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (got === buf.length) break;
    }
    if (got > maxBytes) return { reason: 'oversize', detail: `${name} is more than ${maxBytes} bytes` };
    try {
      return { text: utf8.decode(buf.subarray(0, got)) };
    } catch {
      return { reason: 'malformed', detail: `${name} is not UTF-8` };
    }
  } finally {
    await fh.close();
  }
}

/**
 * Read one KEL document by path under the same rules (the `kel verify` tool): a name of the
 * `<prefix>.kel.json` form must match the document's prefix; any other name is read as is.
 */
export async function readKelFile(path: string, limits: KelLimits): Promise<RawKel> {
  const name = basename(path);
  const stem = KEL_FILE_PATTERN.exec(name)?.[1];
  const source = `file:${path}`;
  const read = await readCapped(path, name, limits.maxBytes);
  if (read === 'gone') return unreadableKel(stem ?? name, source, 'malformed', `${name}: no such file`);
  if (!('text' in read)) return unreadableKel(stem ?? name, source, read.reason, read.detail);
  const kel = parseKelDocument(read.text, source, limits);
  if ('reason' in kel) return unreadableKel(kel.prefix ?? stem ?? name, source, kel.reason, kel.detail);
  if (stem !== undefined && kel.prefix !== stem)
    return unreadableKel(stem, source, 'prefix_mismatch', `${name} holds the KEL of ${kel.prefix}`);
  return kel;
}

/** Where one identifier's file is. */
export interface DirKelLocator {
  prefix: string;
  path: string;
  source: string;
}

/** List the `<prefix>.kel.json` files of `dir` (name order); throws KelSourceError when the directory cannot be listed. */
export async function listKelDirectory(dir: string): Promise<{ ids: DirKelLocator[]; ignored: string[] }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    throw new KelSourceError('kel_source_unreadable', `cannot list the KEL directory ${dir}: ${(e as Error).message}`);
  }
  const out = { ids: [] as DirKelLocator[], ignored: [] as string[] };
  for (const name of names.sort()) {
    const m = KEL_FILE_PATTERN.exec(name);
    if (m === null) {
      if (name.endsWith('.kel.json')) out.ignored.push(name);
      continue;
    }
    const path = join(dir, name);
    out.ids.push({ prefix: m[1]!, path, source: `dir:${path}` });
  }
  return out;
}

/**
 * Read one identifier's file; never throws (an unreadable file is `source_error`, one over
 * `--kel-max-bytes` or over what is left of the reload's `budget` `oversize`). `kel` is null when
 * the file vanished since the listing.
 */
export async function readDirKel(
  loc: DirKelLocator,
  limits: KelLimits,
  budget = Infinity,
): Promise<{ kel: RawKel | null; bytesRead: number }> {
  const name = basename(loc.path);
  const fail = (reason: KelReason, detail: string) => ({ kel: unreadableKel(loc.prefix, loc.source, reason, detail), bytesRead: 0 });
  let read: FileRead;
  try {
    read = await readCapped(loc.path, name, Math.min(limits.maxBytes, budget));
  } catch (e) {
    return fail('source_error', `${name}: ${(e as Error).message}`);
  }
  if (read === 'gone') return { kel: null, bytesRead: 0 };
  if (!('text' in read)) {
    if (read.reason === 'oversize' && budget < limits.maxBytes)
      return fail('oversize', `${read.detail}, over what is left of --kel-max-total-bytes for this reload`);
    return fail(read.reason, read.detail);
  }
  const bytesRead = Buffer.byteLength(read.text);
  const kel = parseKelDocument(read.text, loc.source, limits);
  if ('reason' in kel) return { kel: unreadableKel(loc.prefix, loc.source, kel.reason, kel.detail), bytesRead };
  if (kel.prefix !== loc.prefix)
    return { kel: unreadableKel(loc.prefix, loc.source, 'prefix_mismatch', `${name} holds the KEL of ${kel.prefix}`), bytesRead };
  return { kel, bytesRead };
}

/** Read every `<prefix>.kel.json` of `dir`; throws KelSourceError when the directory cannot be listed. */
export async function readKelDirectory(dir: string, limits: KelLimits): Promise<KelSourceRead> {
  const listing = await listKelDirectory(dir);
  const out: KelSourceRead = { kels: new Map(), ignored: listing.ignored };
  for (const loc of listing.ids) {
    const { kel } = await readDirKel(loc, limits);
    if (kel !== null) out.kels.set(loc.prefix, kel);
  }
  return out;
}

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

/** Read every `<prefix>.kel.json` of `dir`; throws KelSourceError when the directory cannot be listed. */
export async function readKelDirectory(dir: string, limits: KelLimits): Promise<KelSourceRead> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    throw new KelSourceError('kel_source_unreadable', `cannot list the KEL directory ${dir}: ${(e as Error).message}`);
  }
  const out: KelSourceRead = { kels: new Map(), ignored: [] };
  for (const name of names.sort()) {
    const m = KEL_FILE_PATTERN.exec(name);
    if (m === null) {
      if (name.endsWith('.kel.json')) out.ignored.push(name);
      continue;
    }
    const prefix = m[1]!;
    const path = join(dir, name);
    const source = `dir:${path}`;
    const fail = (f: { reason: KelReason; detail: string }): void => {
      out.kels.set(prefix, unreadableKel(prefix, source, f.reason, f.detail));
    };
    let read: FileRead;
    try {
      read = await readCapped(path, name, limits.maxBytes);
    } catch (e) {
      fail({ reason: 'malformed', detail: `${name}: ${(e as Error).message}` });
      continue;
    }
    if (read === 'gone') continue;
    if (!('text' in read)) {
      fail(read);
      continue;
    }
    const kel = parseKelDocument(read.text, source, limits);
    if ('reason' in kel) fail({ reason: kel.reason, detail: kel.detail });
    else if (kel.prefix !== prefix) fail({ reason: 'prefix_mismatch', detail: `${name} holds the KEL of ${kel.prefix}` });
    else out.kels.set(prefix, kel);
  }
  return out;
}

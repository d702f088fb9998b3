/**
 * The `git:` KEL source (SPEC §3.5): a repository holding upstream's `refs/auths/*`, read with the
 * git CLI (src/registry/git.ts). Per identifier: the commit of `refs/auths/kel/<s1>/<prefix>`, or
 * else `refs/auths/registry` at `v1/identities/<s1>/<s2>/<prefix>/`; in its tree,
 * `events/<seq>.json` and `events/<seq>.attachments.cesr` (`<seq>` decimal, ≥ 8 digits, contiguous
 * from 0). `tip.json` and `state.json` are never read.
 *
 * Two steps (SPEC §3.5 rev 4 "Failure isolation"): listing the source (`for-each-ref`, and the
 * registry ref's shard trees one level at a time) — the only failure of the source as a whole — and
 * reading one identifier, whose every failure (a git error, its own `events/` listing over 64 KiB,
 * a blob of another mode, a size over a limit) refuses that identifier only. Listings are never
 * recursive (a tree bomb under `events/` costs one level); ref names and prefixes are checked
 * against the identifier pattern before any use; only blobs of mode 100644 are read, their sizes
 * checked (`cat-file --batch-check`) before their contents; a blob shared by several identifiers
 * is read and parsed once per reload (BlobMemo, keyed by object id).
 */
import { kelFromEventBlobs, parseEventBlob, PREFIX_PATTERN } from '../keri/index.ts';
import { objectInfo, readBlobs, readTrees, runGit, type TreeEntry } from './git.ts';
import { unreadableKel, type KelLimits, type KelReason, type KelSourceRead, type RawKel } from './source.ts';

const OID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;
const KEL_REF = /^refs\/auths\/kel\/([A-Za-z0-9_-]{2})\/([A-Za-z0-9_-]{44})$/;
const REGISTRY_REF = 'refs/auths/registry';
const SHARD = /^[A-Za-z0-9_-]{2}$/;
const EVENT_FILE = /^(\d{8,})\.(json|attachments\.cesr)$/;
/** The ref listing (one line per ref) and each shard tree of the registry ref: far above any real registry. */
const MAX_LISTING_BYTES = 64 << 20;
const MAX_SHARD_TREE_BYTES = 4 << 20;
/** SPEC §3.5: each identifier's `events/` listing has its own cap. */
export const MAX_EVENTS_LISTING_BYTES = 64 << 10;

/** Where one identifier's events are: `treeish` names its `events` tree; `key` changes whenever its contents may. */
export interface GitKelLocator {
  prefix: string;
  source: string;
  treeish: string;
  key: string;
  /** Set when the listing already shows the identifier cannot be read (a ref to something other than a commit). */
  problem?: string;
}

export interface GitKelListing {
  ids: GitKelLocator[];
  ignored: string[];
}

interface TreeFile {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

/** `ls-tree -z` entries: `<mode> SP <type> SP <oid> TAB <name> NUL`. */
function parseListing(out: Buffer): TreeFile[] {
  const files: TreeFile[] = [];
  for (const rec of out.toString('utf8').split('\0')) {
    const m = /^(\d{6}) (\w+) ([0-9a-f]{40}|[0-9a-f]{64})\t(.+)$/s.exec(rec);
    if (m !== null) files.push({ mode: m[1]!, type: m[2]!, oid: m[3]!, path: `events/${m[4]!}` });
  }
  return files;
}

type Failure = { reason: KelReason; detail: string };

/** The ordered (event, attachment) blob ids of an identifier's `events/` entries, or why there are none. */
function eventFiles(
  entries: readonly TreeFile[],
  limits: KelLimits,
): { oids: { event: string; attachment: string | undefined }[] } | Failure {
  const bySeq = new Map<number, { event?: TreeFile; attachment?: TreeFile }>();
  for (const f of entries) {
    const m = EVENT_FILE.exec(f.path.slice(7));
    if (m === null) continue;
    if (f.mode !== '100644' || f.type !== 'blob')
      return { reason: 'malformed', detail: `${f.path} is not a regular file blob (mode ${f.mode}, ${f.type})` };
    const seq = Number(m[1]);
    if (!Number.isSafeInteger(seq)) return { reason: 'malformed', detail: `${f.path}: sequence number out of range` };
    const slot = bySeq.get(seq) ?? {};
    const kind = m[2] === 'json' ? 'event' : 'attachment';
    if (slot[kind] !== undefined) return { reason: 'malformed', detail: `two files for ${kind} ${seq}: ${slot[kind].path}, ${f.path}` };
    slot[kind] = f;
    bySeq.set(seq, slot);
  }
  if (bySeq.size === 0) return { reason: 'malformed', detail: 'no events' };
  if (bySeq.size > limits.maxEvents) return { reason: 'oversize', detail: `${bySeq.size} events (max ${limits.maxEvents})` };
  const oids: { event: string; attachment: string | undefined }[] = [];
  for (let seq = 0; seq < bySeq.size; seq++) {
    const slot = bySeq.get(seq);
    if (slot?.event === undefined) return { reason: 'malformed', detail: `events are not contiguous from 0: no event ${seq}` };
    oids.push({ event: slot.event.oid, attachment: slot.attachment?.oid });
  }
  return { oids };
}

/** List every identifier of the repository; throws KelSourceError when the refs (or the registry ref's shards) cannot be listed. */
export async function listKelRepository(repo: string): Promise<GitKelListing> {
  const out: GitKelListing = { ids: [], ignored: [] };
  const refs = await runGit(repo, ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', 'refs/auths/'], MAX_LISTING_BYTES);
  const perPrefix = new Set<string>();
  let registryCommit: string | undefined;
  for (const line of refs.toString('utf8').split('\n')) {
    if (line === '') continue;
    const [oid = '', type = '', ref = ''] = line.split(' ');
    if (ref === REGISTRY_REF) {
      if (type === 'commit' && OID.test(oid)) registryCommit = oid;
      else out.ignored.push(ref);
      continue;
    }
    const m = KEL_REF.exec(ref);
    if (m === null) {
      if (ref.startsWith('refs/auths/kel/')) out.ignored.push(ref.slice(0, 200));
      continue;
    }
    const prefix = m[2]!;
    if (m[1] !== prefix.slice(0, 2) || !PREFIX_PATTERN.test(prefix) || !OID.test(oid)) {
      out.ignored.push(ref);
      continue;
    }
    perPrefix.add(prefix);
    const loc: GitKelLocator = { prefix, source: `git:${repo} ${ref}`, treeish: `${oid}:events`, key: `${oid} ${prefix}` };
    if (type !== 'commit') loc.problem = `${ref} does not point to a commit`;
    out.ids.push(loc);
  }
  if (registryCommit !== undefined) {
    // v1/identities/<s1>/<s2>/<prefix>: three levels, one batch each, never `ls-tree -r`.
    const base = `${registryCommit}:v1/identities`;
    const level = async (paths: readonly string[]): Promise<Map<string, TreeEntry[]>> => {
      const trees = await readTrees(repo, paths, MAX_SHARD_TREE_BYTES);
      const lists = new Map<string, TreeEntry[]>();
      for (const [path, t] of trees) {
        if (t === 'oversize') out.ignored.push(`${path.slice(41)} (a tree over ${MAX_SHARD_TREE_BYTES} bytes)`);
        else if (t !== 'missing') lists.set(path, t);
      }
      return lists;
    };
    const top = await level([base]);
    const s1s = (top.get(base) ?? []).filter((e) => e.mode === '40000' && SHARD.test(e.name)).map((e) => `${base}/${e.name}`);
    const s2s = [...(await level(s1s))].flatMap(([p, l]) =>
      l.filter((e) => e.mode === '40000' && SHARD.test(e.name)).map((e) => `${p}/${e.name}`),
    );
    for (const [path, list] of await level(s2s)) {
      const [s1, s2] = path.slice(base.length + 1).split('/');
      for (const e of list) {
        if (e.mode !== '40000' || !PREFIX_PATTERN.test(e.name)) continue;
        if (s1 !== e.name.slice(0, 2) || s2 !== e.name.slice(2, 4)) {
          out.ignored.push(`v1/identities/${s1}/${s2}/${e.name}`);
          continue;
        }
        if (perPrefix.has(e.name)) continue;
        out.ids.push({
          prefix: e.name,
          source: `git:${repo} ${REGISTRY_REF}:v1/identities/${s1}/${s2}/${e.name}`,
          treeish: `${path}/${e.name}/events`,
          key: `${e.oid} ${e.name}`,
        });
      }
    }
  }
  out.ids.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  return out;
}

/** What one reload has read of each blob, by object id: its text (null if not UTF-8) and, once parsed, its JSON value. */
export class BlobMemo {
  private readonly blobs = new Map<string, { text: string | null; parsed?: { value: unknown } | { error: string } }>();
  private bytes = 0;
  private readonly maxBytes: number;
  /** Keep at most `maxBytes` of text (a blob past it is still read, only not kept). */
  constructor(maxBytes = 64 << 20) {
    this.maxBytes = maxBytes;
  }
  has(oid: string): boolean {
    return this.blobs.has(oid);
  }
  text(oid: string): string | null | undefined {
    return this.blobs.get(oid)?.text;
  }
  put(oid: string, text: string | null): void {
    const size = text?.length ?? 0;
    if (this.bytes + size > this.maxBytes) return;
    this.bytes += size;
    this.blobs.set(oid, { text });
  }
  /** The blob's JSON value, parsed at most once while it is kept. */
  parse(oid: string, text: string): unknown {
    const b = this.blobs.get(oid);
    if (b === undefined) return parseEventBlob(text);
    b.parsed ??= (() => {
      try {
        return { value: parseEventBlob(text) };
      } catch (e) {
        return { error: (e as Error).message };
      }
    })();
    if ('error' in b.parsed) throw new Error(b.parsed.error);
    return b.parsed.value;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(b: Buffer): string | null {
  try {
    return utf8.decode(b);
  } catch {
    return null;
  }
}

/**
 * Read one identifier; never throws: every failure is that identifier's (`source_error` for a git
 * error, `oversize` for its listing, its sizes or the reload's remaining `budget` of bytes). The
 * result says how many bytes were read anew (blobs already in `memo` are free).
 */
export async function readGitKel(
  repo: string,
  loc: GitKelLocator,
  limits: KelLimits,
  memo: BlobMemo = new BlobMemo(),
  budget = Infinity,
): Promise<{ kel: RawKel; bytesRead: number }> {
  const fail = (reason: KelReason, detail: string) => ({ kel: unreadableKel(loc.prefix, loc.source, reason, detail), bytesRead: 0 });
  if (loc.problem !== undefined) return fail('malformed', loc.problem);
  let listing: Buffer;
  try {
    listing = await runGit(repo, ['ls-tree', '-z', loc.treeish], MAX_EVENTS_LISTING_BYTES);
  } catch (e) {
    const m = (e as Error).message;
    if (/more than \d+ bytes/.test(m)) return fail('oversize', `its events/ listing is over ${MAX_EVENTS_LISTING_BYTES} bytes`);
    if (/Not a valid object name|not a tree object/i.test(m)) return fail('malformed', 'no events/ tree');
    return fail('source_error', m);
  }
  const files = eventFiles(parseListing(listing), limits);
  if (!('oids' in files)) return fail(files.reason, files.detail);
  const all = files.oids.flatMap((e) => (e.attachment === undefined ? [e.event] : [e.event, e.attachment]));
  const fresh = [...new Set(all.filter((oid) => !memo.has(oid)))];
  let info;
  try {
    info = await objectInfo(repo, [...new Set(all)]);
  } catch (e) {
    return fail('source_error', (e as Error).message);
  }
  let bytes = 0;
  for (const oid of all) {
    const i = info.get(oid);
    if (i === undefined || i.type !== 'blob') return fail('malformed', `object ${oid} is missing or not a blob`);
    bytes += i.size;
  }
  if (bytes > limits.maxBytes) return fail('oversize', `${bytes} bytes of events and attachments (max ${limits.maxBytes})`);
  const freshBytes = fresh.reduce((n, oid) => n + info.get(oid)!.size, 0);
  if (freshBytes > budget)
    return fail('oversize', `${freshBytes} bytes to read, over what is left of --kel-max-total-bytes for this reload (${budget})`);
  const read = new Map<string, string | null>();
  try {
    const blobs = await readBlobs(repo, fresh, freshBytes);
    for (const oid of fresh) {
      const b = blobs.get(oid);
      if (b === undefined) return fail('source_error', `blob ${oid} vanished while reading`);
      const text = decode(b);
      read.set(oid, text);
      memo.put(oid, text);
    }
  } catch (e) {
    return fail('source_error', (e as Error).message);
  }
  const text = (oid: string): string | null => (read.has(oid) ? read.get(oid)! : (memo.text(oid) ?? null));
  const pairs: { event: string; attachment: string }[] = [];
  for (const e of files.oids) {
    const event = text(e.event);
    const attachment = e.attachment === undefined ? '' : text(e.attachment);
    if (event === null || attachment === null)
      return { kel: unreadableKel(loc.prefix, loc.source, 'malformed', 'an event or attachment is not UTF-8'), bytesRead: freshBytes };
    pairs.push({ event, attachment });
  }
  const kel = kelFromEventBlobs(loc.prefix, pairs, loc.source, limits, (j) => memo.parse(files.oids[j]!.event, pairs[j]!.event));
  if ('reason' in kel) return { kel: unreadableKel(loc.prefix, loc.source, kel.reason, kel.detail), bytesRead: freshBytes };
  return { kel, bytesRead: freshBytes };
}

/**
 * What an earlier read found per locator key (`<commit> <prefix>`, `<tree> <prefix>`): an
 * identifier whose commit or tree did not move is not read again.
 */
export type GitKelCache = Map<string, RawKel>;

/**
 * Read every identifier's KEL (the `kel verify`/`import-git` tools and tests; the witness reads one
 * identifier at a time in its worker); throws KelSourceError only when the repository cannot be listed.
 */
export async function readKelRepository(repo: string, limits: KelLimits, cache: GitKelCache = new Map()): Promise<KelSourceRead> {
  const listing = await listKelRepository(repo);
  const out: KelSourceRead = { kels: new Map(), ignored: listing.ignored };
  const next: GitKelCache = new Map();
  const memo = new BlobMemo();
  for (const loc of listing.ids) {
    const kel = cache.get(loc.key) ?? (await readGitKel(repo, loc, limits, memo)).kel;
    out.kels.set(loc.prefix, kel);
    next.set(loc.key, kel);
  }
  cache.clear();
  for (const [k, v] of next) cache.set(k, v);
  return out;
}

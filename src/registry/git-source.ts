/**
 * The `git:` KEL source (SPEC §3.5): a repository holding upstream's `refs/auths/*`, read with the
 * git CLI (src/registry/git.ts). Per identifier: the commit of `refs/auths/kel/<s1>/<prefix>`, or
 * else `refs/auths/registry` at `v1/identities/<s1>/<s2>/<prefix>/`; in its tree,
 * `events/<seq>.json` and `events/<seq>.attachments.cesr` (`<seq>` decimal, ≥ 8 digits, contiguous
 * from 0). `tip.json` and `state.json` are never read. Ref names and prefixes are checked against
 * the identifier pattern before any use; only blobs of mode 100644 are read, and their sizes are
 * checked (`cat-file --batch-check`) before their contents are.
 */
import { kelFromEventBlobs, PREFIX_PATTERN } from '../keri/index.ts';
import { KelSourceError } from './errors.ts';
import { objectInfo, readBlobs, runGit } from './git.ts';
import { unreadableKel, type KelLimits, type KelReason, type KelSourceRead, type RawKel } from './source.ts';

const OID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;
const KEL_REF = /^refs\/auths\/kel\/([A-Za-z0-9_-]{2})\/([A-Za-z0-9_-]{44})$/;
const REGISTRY_REF = 'refs/auths/registry';
const REGISTRY_PATH = /^v1\/identities\/([A-Za-z0-9_-]{2})\/([A-Za-z0-9_-]{2})\/([A-Za-z0-9_-]{44})\/events\/([^/]+)$/;
const EVENT_FILE = /^(\d{8,})\.(json|attachments\.cesr)$/;
/** Bounds on what git may print for listings (refs, trees): far above any real registry. */
const MAX_LISTING_BYTES = 64 << 20;

interface TreeFile {
  mode: string;
  type: string;
  oid: string;
  /** The path in the tree, for messages. */
  path: string;
}

/** One identifier's event files, by name inside `events/`, and where they come from. */
interface Candidate {
  prefix: string;
  source: string;
  files: Map<string, TreeFile>;
}

/** `ls-tree -r -z` entries: `<mode> SP <type> SP <oid> TAB <path> NUL`. */
function parseTree(out: Buffer): TreeFile[] {
  const files: TreeFile[] = [];
  for (const rec of out.toString('utf8').split('\0')) {
    const m = /^(\d{6}) (\w+) ([0-9a-f]{40}|[0-9a-f]{64})\t(.+)$/s.exec(rec);
    if (m !== null) files.push({ mode: m[1]!, type: m[2]!, oid: m[3]!, path: m[4]! });
  }
  return files;
}

/** The ordered (event, attachment) blob ids of a candidate, or why there are none. */
function eventFiles(
  c: Candidate,
  limits: KelLimits,
): { oids: { event: string; attachment: string | undefined }[] } | { reason: KelReason; detail: string } {
  const bySeq = new Map<number, { event?: TreeFile; attachment?: TreeFile }>();
  for (const [name, f] of c.files) {
    const m = EVENT_FILE.exec(name);
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What an earlier read found per `<commit> <prefix>` of a per-prefix ref: a ref whose commit did
 * not move is not listed and read again (a poll then costs one `for-each-ref` for them).
 */
export type GitKelCache = Map<string, RawKel>;

/**
 * Read every identifier's KEL from the repository; throws KelSourceError when git cannot read it
 * at all. `cache` (kept by the caller between polls) is updated to this read's per-prefix refs.
 */
export async function readKelRepository(repo: string, limits: KelLimits, cache: GitKelCache = new Map()): Promise<KelSourceRead> {
  const out: KelSourceRead = { kels: new Map(), ignored: [] };
  const nextCache: GitKelCache = new Map();
  const fail = (prefix: string, source: string, reason: KelReason, detail: string): void => {
    out.kels.set(prefix, unreadableKel(prefix, source, reason, detail));
  };
  const refs = await runGit(repo, ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', 'refs/auths/'], MAX_LISTING_BYTES);
  const candidates = new Map<string, Candidate>();
  const kelCommits: { prefix: string; oid: string; ref: string }[] = [];
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
    if (m[1] !== prefix.slice(0, 2) || !PREFIX_PATTERN.test(prefix)) {
      out.ignored.push(ref);
      continue;
    }
    if (type !== 'commit' || !OID.test(oid)) {
      fail(prefix, `git:${repo} ${ref}`, 'malformed', `${ref} does not point to a commit`);
      continue;
    }
    kelCommits.push({ prefix, oid, ref });
  }
  for (const k of kelCommits) {
    const known = cache.get(`${k.oid} ${k.prefix}`);
    if (known !== undefined) {
      out.kels.set(k.prefix, known);
      nextCache.set(`${k.oid} ${k.prefix}`, known);
      continue;
    }
    const tree = parseTree(await runGit(repo, ['ls-tree', '-r', '-z', '--full-tree', k.oid, '--', 'events'], MAX_LISTING_BYTES));
    const files = new Map<string, TreeFile>();
    for (const f of tree) if (f.path.startsWith('events/') && !f.path.slice(7).includes('/')) files.set(f.path.slice(7), f);
    candidates.set(k.prefix, { prefix: k.prefix, source: `git:${repo} ${k.ref}`, files });
  }
  if (registryCommit !== undefined) {
    const perPrefix = new Set(kelCommits.map((k) => k.prefix));
    const tree = parseTree(
      await runGit(repo, ['ls-tree', '-r', '-z', '--full-tree', registryCommit, '--', 'v1/identities'], MAX_LISTING_BYTES),
    );
    for (const f of tree) {
      const m = REGISTRY_PATH.exec(f.path);
      if (m === null) continue;
      const prefix = m[3]!;
      if (m[1] !== prefix.slice(0, 2) || m[2] !== prefix.slice(2, 4)) {
        out.ignored.push(f.path.slice(0, 200));
        continue;
      }
      if (perPrefix.has(prefix) || out.kels.has(prefix)) continue;
      let c = candidates.get(prefix);
      if (c === undefined) {
        c = { prefix, source: `git:${repo} ${REGISTRY_REF}:v1/identities/${m[1]}/${m[2]}/${prefix}`, files: new Map() };
        candidates.set(prefix, c);
      }
      c.files.set(m[4]!, f);
    }
  }

  // Sizes first: an identifier over the byte limit is refused before any of its blobs is read.
  const wanted = new Map<string, { event: string; attachment: string | undefined }[]>();
  for (const c of candidates.values()) {
    const files = eventFiles(c, limits);
    if ('oids' in files) wanted.set(c.prefix, files.oids);
    else fail(c.prefix, c.source, files.reason, files.detail);
  }
  const allOids = [...wanted.values()].flatMap((l) => l.flatMap((e) => (e.attachment === undefined ? [e.event] : [e.event, e.attachment])));
  const info = await objectInfo(repo, [...new Set(allOids)]);
  let total = 0;
  const toRead: string[] = [];
  for (const [prefix, list] of wanted) {
    const c = candidates.get(prefix)!;
    let bytes = 0;
    let missing: string | undefined;
    for (const e of list) {
      for (const oid of e.attachment === undefined ? [e.event] : [e.event, e.attachment]) {
        const i = info.get(oid);
        if (i === undefined || i.type !== 'blob') missing = oid;
        else bytes += i.size;
      }
    }
    if (missing !== undefined) {
      fail(prefix, c.source, 'malformed', `object ${missing} is missing or not a blob`);
      wanted.delete(prefix);
    } else if (bytes > limits.maxBytes) {
      fail(prefix, c.source, 'oversize', `${bytes} bytes of events and attachments (max ${limits.maxBytes})`);
      wanted.delete(prefix);
    } else {
      total += bytes;
      for (const e of list) toRead.push(e.event, ...(e.attachment === undefined ? [] : [e.attachment]));
    }
  }
  const blobs = await readBlobs(repo, [...new Set(toRead)], total);
  for (const [prefix, list] of wanted) {
    const c = candidates.get(prefix)!;
    try {
      const pairs = list.map((e) => {
        const event = blobs.get(e.event);
        const attachment = e.attachment === undefined ? Buffer.alloc(0) : blobs.get(e.attachment);
        if (event === undefined || attachment === undefined)
          throw new KelSourceError('kel_source_unreadable', 'a blob vanished while reading');
        return { event: utf8.decode(event), attachment: utf8.decode(attachment) };
      });
      const kel = kelFromEventBlobs(prefix, pairs, c.source, limits);
      if ('reason' in kel) fail(prefix, c.source, kel.reason, kel.detail);
      else out.kels.set(prefix, kel);
    } catch (e) {
      if (e instanceof KelSourceError) throw e;
      fail(prefix, c.source, 'malformed', 'an event or attachment is not UTF-8');
    }
  }
  for (const k of kelCommits) {
    const kel = out.kels.get(k.prefix);
    if (kel !== undefined) nextCache.set(`${k.oid} ${k.prefix}`, kel);
  }
  cache.clear();
  for (const [key, kel] of nextCache) cache.set(key, kel);
  return out;
}

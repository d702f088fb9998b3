// The KEL sources' hostile-input rules (SPEC §3.5 "Sources"): dir: reads only regular files named
// <prefix>.kel.json (symlinks, FIFOs, directories refused; other names ignored; size capped);
// git: checks ref names and prefixes, reads only mode-100644 blobs, checks sizes before reading,
// needs contiguous events, falls back to refs/auths/registry, never reads tip.json/state.json;
// a source that cannot be read at all throws kel_source_unreadable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import { readKelDirectory } from '../../src/registry/dir-source.ts';
import { BlobMemo, listKelRepository, readGitKel, readKelRepository, type GitKelCache } from '../../src/registry/git-source.ts';
import type { RawKel } from '../../src/keri/index.ts';
import { gitEnv } from '../../src/registry/git.ts';
import { parseKelSourceSpec } from '../../src/registry/source.ts';
import { ProtocolError } from '../../src/errors.ts';
import { commit, git, initRepo, kelFiles, setRef, writeKelRef, writeRegistryRef, writeTree } from '../helpers/kel-git.ts';
import { AGENT_EVENTS, AGENT_PREFIX, kelDocument, MULTI_EVENTS, MULTI_PREFIX, ROOT_EVENTS, ROOT_PREFIX } from '../helpers/kel-vectors.ts';
import { tempDir } from '../helpers/tmp.ts';

const defect = (kels: Map<string, { defect?: { reason: string; detail: string } }>, prefix: string): string | undefined =>
  kels.get(prefix)?.defect?.reason;
const isCode = (code: string) => (e: unknown) => e instanceof ProtocolError && e.code === code;

void test('--kel-source is dir:PATH or git:PATH', () => {
  assert.deepEqual(parseKelSourceSpec('dir:/a/b'), { kind: 'dir', path: '/a/b' });
  assert.deepEqual(parseKelSourceSpec('git:repo'), { kind: 'git', path: 'repo' });
  for (const bad of ['', 'dir:', 'file:/x', '/x', 'DIR:/x']) assert.throws(() => parseKelSourceSpec(bad), isCode('invalid_kel_source'));
  // ledger: is the witness's own KERI ledger: a witness node's source, never the bridge's or the monitor's
  assert.deepEqual(parseKelSourceSpec('ledger:', { ledger: true }), { kind: 'ledger', path: '' });
  assert.throws(() => parseKelSourceSpec('ledger:'), { code: 'invalid_kel_source', message: /must be dir:PATH or git:PATH,/ });
});

void test('the git environment: no system or global config, no replace objects, only PATH inherited', () => {
  const env = gitEnv();
  assert.equal(env.GIT_CONFIG_NOSYSTEM, '1');
  assert.equal(env.GIT_CONFIG_GLOBAL, '/dev/null');
  assert.equal(env.GIT_NO_REPLACE_OBJECTS, '1');
  assert.deepEqual(
    Object.keys(env)
      .filter((k) => !k.startsWith('GIT_'))
      .sort(),
    ['LC_ALL', 'PATH'],
  );
});

void test('dir: regular files only; symlinks, FIFOs and directories refused; other names ignored; size capped; prefix checked', async () => {
  const { dir, cleanup } = tempDir('aw-kel-src-');
  try {
    const ok = join(dir, 'ok');
    mkdirSync(ok);
    writeFileSync(join(ok, `${ROOT_PREFIX}.kel.json`), kelDocument(ROOT_PREFIX, ROOT_EVENTS, 2));
    // A symlink to a valid KEL under a valid name: refused, never followed.
    writeFileSync(join(dir, 'elsewhere.json'), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    symlinkSync(join(dir, 'elsewhere.json'), join(ok, `${AGENT_PREFIX}.kel.json`));
    // A FIFO under a valid name: refused without blocking.
    execFileSync('mkfifo', [join(ok, `${MULTI_PREFIX}.kel.json`)]);
    // A directory under a valid name.
    const dirName = 'E' + 'd'.repeat(43);
    mkdirSync(join(ok, `${dirName}.kel.json`));
    // Names that are not <44-char prefix>.kel.json are ignored.
    writeFileSync(join(ok, 'short.kel.json'), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    writeFileSync(join(ok, `${AGENT_PREFIX}.json`), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    writeFileSync(join(ok, `.${AGENT_PREFIX}.kel.json.tmp`), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    writeFileSync(join(ok, `${AGENT_PREFIX}x.kel.json`), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    // A file whose document names another prefix.
    const other = 'E' + 'o'.repeat(43);
    writeFileSync(join(ok, `${other}.kel.json`), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));

    const read = await readKelDirectory(ok, DEFAULT_KEL_LIMITS);
    assert.deepEqual([...read.kels.keys()].sort(), [AGENT_PREFIX, MULTI_PREFIX, ROOT_PREFIX, dirName, other].sort());
    assert.equal(read.kels.get(ROOT_PREFIX)!.defect, undefined);
    assert.equal(read.kels.get(ROOT_PREFIX)!.events.length, 2);
    assert.equal(defect(read.kels, AGENT_PREFIX), 'malformed');
    assert.match(read.kels.get(AGENT_PREFIX)!.defect!.detail, /not a regular file/);
    assert.equal(defect(read.kels, MULTI_PREFIX), 'malformed');
    assert.equal(defect(read.kels, dirName), 'malformed');
    assert.equal(defect(read.kels, other), 'prefix_mismatch');
    assert.deepEqual(read.ignored.sort(), ['short.kel.json', `${AGENT_PREFIX}x.kel.json`].sort());

    // Over --kel-max-bytes: refused before parsing.
    const small = await readKelDirectory(ok, { maxEvents: 10, maxBytes: 100 });
    assert.equal(defect(small.kels, ROOT_PREFIX), 'oversize');

    // A directory that cannot be listed fails the source as a whole.
    await assert.rejects(readKelDirectory(join(dir, 'missing'), DEFAULT_KEL_LIMITS), isCode('kel_source_unreadable'));
  } finally {
    cleanup();
  }
});

void test('git: per-prefix refs, then refs/auths/registry; bad ref names ignored; modes, gaps and sizes refused; tip.json never read', async () => {
  const { dir, cleanup } = tempDir('aw-kel-git-src-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    // ROOT by its own ref (pretty-printed events, as upstream writes them), with a forged state.json beside.
    writeKelRef(repo, ROOT_PREFIX, ROOT_EVENTS.slice(0, 2), [{ path: 'state.json', content: '{"forged":true}' }]);
    // AGENT only in the aggregated registry tree; MULTI in both (the per-prefix ref wins).
    writeRegistryRef(
      repo,
      new Map([
        [AGENT_PREFIX, AGENT_EVENTS.slice(0, 1)],
        [MULTI_PREFIX, MULTI_EVENTS.slice(0, 1)],
      ]),
    );
    writeKelRef(repo, MULTI_PREFIX, MULTI_EVENTS);
    let read = await readKelRepository(repo, DEFAULT_KEL_LIMITS);
    assert.deepEqual([...read.kels.keys()].sort(), [AGENT_PREFIX, MULTI_PREFIX, ROOT_PREFIX].sort());
    for (const k of read.kels.values()) assert.equal(k.defect, undefined, k.prefix);
    assert.equal(read.kels.get(ROOT_PREFIX)!.events.length, 2);
    assert.equal(read.kels.get(AGENT_PREFIX)!.events.length, 1);
    assert.equal(read.kels.get(MULTI_PREFIX)!.events.length, 2);
    assert.match(read.kels.get(AGENT_PREFIX)!.source, /refs\/auths\/registry/);

    // Bad ref names: wrong shard, short prefix, characters outside the alphabet, a deeper path.
    const c = commit(repo, writeTree(repo, kelFiles('', AGENT_EVENTS.slice(0, 1))));
    const badPrefix = 'X' + AGENT_PREFIX.slice(1);
    for (const ref of [
      `refs/auths/kel/Zz/${badPrefix}`,
      'refs/auths/kel/EC/EC3GG',
      `refs/auths/kel/EC/${AGENT_PREFIX}/x`,
      `refs/auths/kel/EC/E${'+'.repeat(43)}`,
    ])
      setRef(repo, ref, c);
    read = await readKelRepository(repo, DEFAULT_KEL_LIMITS);
    assert.equal(read.kels.has(badPrefix), false);
    assert.equal(read.ignored.length, 4);

    // A symlink, an executable and a gap, each in its own KEL.
    const sym = 'E' + 's'.repeat(43);
    const exe = 'E' + 'x'.repeat(43);
    const gap = 'E' + 'g'.repeat(43);
    const files = kelFiles('', ROOT_EVENTS.slice(0, 2));
    setRef(repo, `refs/auths/kel/Es/${sym}`, commit(repo, writeTree(repo, [files[0]!, { ...files[2]!, mode: '120000' }])));
    setRef(repo, `refs/auths/kel/Ex/${exe}`, commit(repo, writeTree(repo, [{ ...files[0]!, mode: '100755' }])));
    setRef(repo, `refs/auths/kel/Eg/${gap}`, commit(repo, writeTree(repo, [files[2]!, files[3]!])));
    read = await readKelRepository(repo, DEFAULT_KEL_LIMITS);
    assert.equal(defect(read.kels, sym), 'malformed');
    assert.match(read.kels.get(sym)!.defect!.detail, /mode 120000/);
    assert.equal(defect(read.kels, exe), 'malformed');
    assert.equal(defect(read.kels, gap), 'malformed');
    assert.match(read.kels.get(gap)!.defect!.detail, /contiguous/);

    // Sizes and counts are checked before contents are read.
    read = await readKelRepository(repo, { maxEvents: 1, maxBytes: DEFAULT_KEL_LIMITS.maxBytes });
    assert.equal(defect(read.kels, ROOT_PREFIX), 'oversize');
    read = await readKelRepository(repo, { maxEvents: 100, maxBytes: 400 });
    assert.equal(defect(read.kels, ROOT_PREFIX), 'oversize');
    assert.match(read.kels.get(ROOT_PREFIX)!.defect!.detail, /bytes/);

    // Not a repository: the source as a whole fails.
    await assert.rejects(readKelRepository(join(dir, 'nope'), DEFAULT_KEL_LIMITS), isCode('kel_source_unreadable'));
  } finally {
    cleanup();
  }
});

void test('git: a per-prefix ref whose commit did not move is not read again (poll cache); a moved one is', async () => {
  const { dir, cleanup } = tempDir('aw-kel-git-cache-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    writeKelRef(repo, ROOT_PREFIX, ROOT_EVENTS.slice(0, 1));
    writeKelRef(repo, AGENT_PREFIX, AGENT_EVENTS.slice(0, 1));
    const cache: GitKelCache = new Map();
    const first = await readKelRepository(repo, DEFAULT_KEL_LIMITS, cache);
    assert.equal(cache.size, 2);
    writeKelRef(repo, ROOT_PREFIX, ROOT_EVENTS.slice(0, 2));
    const second = await readKelRepository(repo, DEFAULT_KEL_LIMITS, cache);
    assert.equal(second.kels.get(AGENT_PREFIX), first.kels.get(AGENT_PREFIX), 'unchanged ref: the cached read');
    assert.notEqual(second.kels.get(ROOT_PREFIX), first.kels.get(ROOT_PREFIX));
    assert.equal(second.kels.get(ROOT_PREFIX)!.events.length, 2);
    assert.equal(cache.size, 2);
  } finally {
    cleanup();
  }
});

void test('git: a blob shared by several refs is read and parsed once per reload (one BlobMemo); a per-identifier listing over 64 KiB is oversize for that identifier only', async () => {
  const { dir, cleanup } = tempDir('aw-kel-git-memo-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    writeKelRef(repo, ROOT_PREFIX, ROOT_EVENTS.slice(0, 1));
    const shared = commit(repo, writeTree(repo, [{ path: 'events/00000000.json', content: '{"shared":[1,2,3]}' }]));
    const sharers = ['Ea', 'Eb', 'Ec'].map((s) => s + 'Q'.repeat(42));
    for (const p of sharers) setRef(repo, `refs/auths/kel/${p.slice(0, 2)}/${p}`, shared);
    // An events/ tree whose listing alone is over 64 KiB (1 500 entries).
    const wide = 'Ew' + 'W'.repeat(42);
    const empty = git(repo, ['hash-object', '-w', '--stdin'], '');
    const events = git(
      repo,
      ['mktree'],
      Array.from({ length: 1500 }, (_, i) => `100644 blob ${empty}\t${String(i).padStart(40, '0')}.x\n`).join(''),
    );
    setRef(repo, `refs/auths/kel/Ew/${wide}`, commit(repo, git(repo, ['mktree'], `040000 tree ${events}\tevents\n`)));
    const listing = await listKelRepository(repo);
    const memo = new BlobMemo();
    const kels = new Map<string, RawKel>();
    for (const loc of listing.ids) kels.set(loc.prefix, (await readGitKel(repo, loc, DEFAULT_KEL_LIMITS, memo)).kel);
    const first = kels.get(sharers[0]!)!.events[0];
    assert.deepEqual(first, { shared: [1, 2, 3] });
    for (const p of sharers.slice(1)) assert.equal(kels.get(p)!.events[0], first, 'the same parsed value: parsed once');
    assert.equal(kels.get(wide)!.defect?.reason, 'oversize');
    assert.match(kels.get(wide)!.defect!.detail, /listing/);
    assert.equal(kels.get(ROOT_PREFIX)!.defect, undefined);
    // The byte budget counts a shared blob once.
    const budgeted = new BlobMemo();
    const sizes: number[] = [];
    for (const p of sharers)
      sizes.push(
        (
          await readGitKel(
            repo,
            listing.ids.find((l) => l.prefix === p)!,
            DEFAULT_KEL_LIMITS,
            budgeted,
            100,
          )
        ).bytesRead,
      );
    assert.deepEqual(sizes, [18, 0, 0]);
  } finally {
    cleanup();
  }
});

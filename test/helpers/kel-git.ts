/**
 * Upstream-layout KEL repositories for tests, built with the git CLI (no work tree: blobs, trees
 * with arbitrary modes via `git mktree`, commits and refs): `refs/auths/kel/<s1>/<prefix>` and
 * `refs/auths/registry` at `v1/identities/<s1>/<s2>/<prefix>/` (SPEC §3.5 `git:`).
 */
import { execFileSync } from 'node:child_process';

const ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.test',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.test',
};

export function git(repo: string, args: readonly string[], input?: string | Buffer): string {
  return execFileSync('git', ['-C', repo, ...args], { env: ENV, input, encoding: 'utf8' }).trim();
}

export function initRepo(dir: string): string {
  execFileSync('git', ['init', '-q', '--bare', dir], { env: ENV });
  return dir;
}

export interface TreeFile {
  path: string;
  content: string | Buffer;
  /** Default 100644; 120000 makes a symlink entry, 100755 an executable. */
  mode?: string;
}

/** Write `files` as a tree (nested directories built bottom-up); returns the tree id. */
export function writeTree(repo: string, files: readonly TreeFile[]): string {
  interface Dir {
    files: Map<string, { mode: string; oid: string }>;
    dirs: Map<string, Dir>;
  }
  const root: Dir = { files: new Map(), dirs: new Map() };
  for (const f of files) {
    const parts = f.path.split('/');
    let d = root;
    for (const p of parts.slice(0, -1)) {
      let next = d.dirs.get(p);
      if (next === undefined) {
        next = { files: new Map(), dirs: new Map() };
        d.dirs.set(p, next);
      }
      d = next;
    }
    const oid = git(repo, ['hash-object', '-w', '--stdin'], f.content);
    d.files.set(parts[parts.length - 1]!, { mode: f.mode ?? '100644', oid });
  }
  const make = (d: Dir): string => {
    const lines: string[] = [];
    for (const [name, f] of d.files) lines.push(`${f.mode} ${f.mode === '160000' ? 'commit' : 'blob'} ${f.oid}\t${name}`);
    for (const [name, sub] of d.dirs) lines.push(`040000 tree ${make(sub)}\t${name}`);
    return git(repo, ['mktree', '--missing'], lines.join('\n') + '\n');
  };
  return make(root);
}

export function commit(repo: string, tree: string, parent?: string): string {
  return git(repo, ['commit-tree', tree, '-m', 'kel', ...(parent === undefined ? [] : ['-p', parent])]);
}

export function setRef(repo: string, ref: string, oid: string): void {
  git(repo, ['update-ref', ref, oid]);
}

export const seqName = (i: number): string => String(i).padStart(8, '0');

/** Upstream's files for one KEL: events/<seq>.json (pretty-printed, as upstream writes) and .attachments.cesr. */
export function kelFiles(base: string, events: readonly { event: unknown; attachment: string }[]): TreeFile[] {
  return events.flatMap((e, i) => [
    { path: `${base}events/${seqName(i)}.json`, content: JSON.stringify(e.event, null, 2) },
    ...(e.attachment === '' ? [] : [{ path: `${base}events/${seqName(i)}.attachments.cesr`, content: e.attachment }]),
  ]);
}

/** Point `refs/auths/kel/<s1>/<prefix>` at a commit of this KEL (with upstream's tip.json beside it). */
export function writeKelRef(
  repo: string,
  prefix: string,
  events: readonly { event: unknown; attachment: string }[],
  extra: TreeFile[] = [],
): string {
  const tree = writeTree(repo, [...kelFiles('', events), { path: 'tip.json', content: '{"version":1}' }, ...extra]);
  const oid = commit(repo, tree);
  setRef(repo, `refs/auths/kel/${prefix.slice(0, 2)}/${prefix}`, oid);
  return oid;
}

/** `refs/auths/registry` holding these KELs under v1/identities/<s1>/<s2>/<prefix>/. */
export function writeRegistryRef(repo: string, kels: ReadonlyMap<string, readonly { event: unknown; attachment: string }[]>): string {
  const files: TreeFile[] = [{ path: 'v1/metadata.json', content: '{}' }];
  for (const [prefix, events] of kels)
    files.push(...kelFiles(`v1/identities/${prefix.slice(0, 2)}/${prefix.slice(2, 4)}/${prefix}/`, events));
  const oid = commit(repo, writeTree(repo, files));
  setRef(repo, 'refs/auths/registry', oid);
  return oid;
}

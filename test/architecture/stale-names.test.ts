// Stale file names (issue 26 item 6): every repository path that a comment in src/**/*.ts, a page
// in docs/*.md or README.md names — `src/…`, `test/…`, `bench/…`, `docs/…` or `deploy/…` — exists in
// the tree, so a moved or deleted file cannot stay cited. A path with a file extension must be that
// file, one ending in `/` that folder, one with neither a file, a folder or a `.ts` module
// (`deploy/Dockerfile`, `src/verify`, `src/log/merkle`). Brace groups are expanded
// (`src/client/{a,b}.ts`); globs (`*`) and paths inside other paths or URLs are not checked.
// Comments in src/ also cite files relative to themselves (`./policy.ts`, `../log/types.ts`): such a
// path must resolve from the comment's file. Comments and pages also cite a module by its bare name
// (`(subtree-request.ts)`): a bare `*.ts` name must be the name of some file under src/, test/ or
// bench/. To see it fail, cite `src/client/offline.ts` (deleted) in any src comment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Paths that are named on purpose although they do not exist; keep this list small, one reason each.
 */
const ALLOWED = new Set<string>([
  // README "In a browser": the reader's own module, bundled with the verifier by esbuild.
  'verify-anchor.ts',
]);

function list(dir: string, ext: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return list(p, ext);
    return e.isFile() && e.name.endsWith(ext) ? [p] : [];
  });
}

const rel = (p: string): string => relative(ROOT, p).split(sep).join('/');

/**
 * The text of every comment of a TypeScript file (line and block), with its 1-based line: the
 * comment ranges before and after every token of the parsed file (a bare scanner cannot tell a
 * regular expression or a template literal's tail from other text, and would miss comments).
 */
function comments(path: string, text: string): { line: number; text: string }[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const seen = new Map<number, { line: number; text: string }>();
  const add = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.set(r.pos, { line: sf.getLineAndCharacterOfPosition(r.pos).line + 1, text: text.slice(r.pos, r.end) });
    }
  };
  const visit = (node: ts.Node): void => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...seen.values()];
}

// A root folder not preceded by a path, word or URL character, then path characters or {a,b} groups.
const PATH = /(?<![\w./@~-])(?:src|test|bench|docs|deploy)\/(?:[\w.*/-]|\{[\w.,/-]*\})*/g;

function expand(path: string): string[] {
  const m = /\{([^}]*)\}/.exec(path);
  if (m === null) return [path];
  const [head, tail] = [path.slice(0, m.index), path.slice(m.index + m[0].length)];
  return (m[1] ?? '').split(',').flatMap((alt) => expand(head + alt + tail));
}

/** The repository paths a text names (brace groups expanded, trailing sentence dots dropped, globs skipped). */
function namedPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PATH)) {
    for (const p of expand(m[0].replace(/\.+$/, ''))) {
      if (!p.includes('*') && !p.includes('{') && !p.endsWith('//')) out.push(p);
    }
  }
  return out;
}

const hasExtension = (p: string): boolean => /\/[^/]*\w\.[a-z][a-z0-9]*$/i.test(p);

/** `p` (relative to `base`) is there: the file, the folder (`/`), or without an extension also a module. */
function exists(p: string, base = ROOT): boolean {
  const abs = join(base, p);
  if (p.endsWith('/')) return existsSync(abs) && statSync(abs).isDirectory();
  if (hasExtension(p)) return existsSync(abs) && statSync(abs).isFile();
  return existsSync(abs) || existsSync(`${abs}.ts`);
}

// `./x.ts`, `../y/z.ts` (in src comments, relative to the file) and bare `name.ts` (everywhere).
const RELATIVE = /(?<![\w./@~-])\.\.?\/[\w./-]*\w\.ts\b/g;
const BARE = /(?<![\w./@~${}-])[\w-]+\.ts\b(?![\w/-])/g;
const fileNames = new Set(['src', 'test', 'bench'].flatMap((d) => list(join(ROOT, d), '').map((p) => p.slice(p.lastIndexOf(sep) + 1))));

/** A cited path that is not in the tree, and where it is cited. */
interface Citation {
  where: string;
  path: string;
}

let checked = 0;
function check(out: Citation[], ok: boolean, c: Citation): void {
  checked++;
  if (!ok) out.push(c);
}

function staleCitations(): Citation[] {
  const out: Citation[] = [];
  for (const file of list(join(ROOT, 'src'), '.ts')) {
    for (const c of comments(file, readFileSync(file, 'utf8'))) {
      c.text.split('\n').forEach((line, i) => {
        const where = `${rel(file)}:${c.line + i}`;
        for (const path of namedPaths(line)) check(out, exists(path), { where, path });
        for (const [path] of line.matchAll(RELATIVE)) check(out, exists(path, dirname(file)), { where, path });
        for (const [name] of line.matchAll(BARE)) check(out, fileNames.has(name), { where, path: name });
      });
    }
  }
  const pages = [
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
    join(ROOT, 'README.md'),
  ];
  for (const file of pages) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const where = `${rel(file)}:${i + 1}`;
        for (const path of namedPaths(line)) check(out, exists(path), { where, path });
        for (const [name] of line.matchAll(BARE)) check(out, fileNames.has(name), { where, path: name });
      });
  }
  return out;
}

void test('the path finder expands braces, drops a sentence dot, skips globs, URLs and nested paths', () => {
  assert.deepEqual(namedPaths('see src/client/{a,b}.ts and docs/x.md.'), ['src/client/a.ts', 'src/client/b.ts', 'docs/x.md']);
  assert.deepEqual(namedPaths('`test/store/conformance/`, src/verify, test/**/*.test.ts'), ['test/store/conformance/', 'src/verify']);
  assert.deepEqual(namedPaths('https://example.org/src/a.ts packages/x/src/b.ts'), []);
  assert.equal(exists('src/verify'), true);
  assert.equal(exists('src/verify/policy'), true);
  assert.equal(exists('src/verify/policy.ts/'), false);
  assert.equal(exists('src/client/offline.ts'), false);
});

void test('every repository path named in src comments, docs/*.md and README.md exists', () => {
  const stale = staleCitations().filter((c) => !ALLOWED.has(c.path));
  assert.ok(checked > 100, `only ${checked} citations found: the scan is broken`);
  assert.deepEqual(
    stale.map((c) => `${c.where}: ${c.path}`),
    [],
    'stale file names (fix the reference, or allow-list an intentionally hypothetical path)',
  );
});

void test('the allow-list holds only paths that really are missing', () => {
  assert.deepEqual(
    [...ALLOWED].filter((p) => exists(p) || fileNames.has(p)),
    [],
  );
});

// User-facing text cites only what ships (issue 27 item 7): the contract the team works from
// (`SPEC.md`, kept outside this repository) is in neither the repository nor the npm package, so
// no string a user can see — CLI help, error details, OpenAPI summaries, metric help, log lines —
// may cite it. Such text cites docs/protocol.md (the users' copy of the contract) instead, and
// every `docs/protocol.md §N` it cites is a section of that page (a heading or a bullet's marker). Comments may cite SPEC
// (they are for this project's engineers). The check reads every string literal and template
// part of src/**/*.ts with the TypeScript parser, so a citation cannot hide in a comment-like
// string or be missed in a template. To see it fail, put "(SPEC §7.2)" into any summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');

function list(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return list(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every string literal and template-literal part of a file, with its 1-based line. */
function strings(file: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      out.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The sections docs/protocol.md defines: its `§N`, `§N.M`, `§N.M.K` headings, and the `(§N.M)`
 * markers that open a bullet (`* **Keys** (§5.1): …`).
 */
function protocolSections(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'protocol.md'), 'utf8');
  const headings = [...text.matchAll(/^#{2,4} §(\d+(?:\.\d+)*)/gm)].map((m) => m[1]!);
  const bullets = [...text.matchAll(/^\* \*\*[^*]+\*\* \(§(\d+(?:\.\d+)*)[,)]/gm)].map((m) => m[1]!);
  return new Set([...headings, ...bullets]);
}

const files = list(join(ROOT, 'src'));
const rel = (p: string): string => relative(ROOT, p).split(sep).join('/');

void test('no user-facing string in src/ cites SPEC (it does not ship)', () => {
  const hits: string[] = [];
  for (const f of files) {
    for (const s of strings(f)) if (/\bSPEC\b|SPEC\.md/.test(s.text)) hits.push(`${rel(f)}:${s.line}: ${s.text.slice(0, 120)}`);
  }
  assert.deepEqual(hits, [], `cite docs/protocol.md §… instead:\n${hits.join('\n')}`);
});

void test('every docs/protocol.md section a user-facing string cites is defined there (a heading or a bullet marker)', () => {
  const sections = protocolSections();
  assert.ok(sections.size > 10, 'docs/protocol.md has its § headings');
  const missing: string[] = [];
  for (const f of files) {
    for (const s of strings(f)) {
      for (const m of s.text.matchAll(/protocol\.md §(\d+(?:\.\d+)*)/g)) {
        if (!sections.has(m[1]!)) missing.push(`${rel(f)}:${s.line}: §${m[1]!}`);
      }
    }
  }
  assert.deepEqual(missing, [], `no such section in docs/protocol.md:\n${missing.join('\n')}`);
});

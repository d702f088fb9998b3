// Closed error-code unions (docs/errors.md): every `export type …Code` union of a src/**/errors.ts
// file has its section in docs/errors.md with one row per code and no other row, so the page cannot
// drift from the source; every error class is typed to a union (CodedError<Union>, or a
// `declare readonly code` narrowing), so a code outside its module's union does not compile; and
// no code compares a ProtocolError's `code` with a string (branch on the owning module's class,
// whose `code` is its union, so the comparison is type-checked).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = 'docs/errors.md';

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return listTs(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

const rel = (p: string): string => relative(ROOT, p).split(sep).join('/');
const sources = listTs(join(ROOT, 'src')).map((p) => ({
  path: rel(p),
  sf: ts.createSourceFile(p, readFileSync(p, 'utf8'), ts.ScriptTarget.Latest, true),
}));

interface CodeUnion {
  name: string;
  file: string;
  /** The string-literal members; members naming another union are that union's (own section). */
  codes: string[];
}

function literalMembers(t: ts.TypeNode): string[] | undefined {
  const parts = ts.isUnionTypeNode(t) ? t.types : [t];
  const out: string[] = [];
  for (const p of parts) {
    if (ts.isLiteralTypeNode(p) && ts.isStringLiteral(p.literal)) out.push(p.literal.text);
    else if (!ts.isTypeReferenceNode(p)) return undefined;
  }
  return out;
}

const isExported = (n: ts.Node): boolean =>
  ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

const unions: CodeUnion[] = [];
for (const { path, sf } of sources) {
  if (!path.endsWith('/errors.ts')) continue;
  for (const st of sf.statements) {
    if (!ts.isTypeAliasDeclaration(st) || !isExported(st) || !st.name.text.endsWith('Code')) continue;
    const codes = literalMembers(st.type);
    if (codes !== undefined) unions.push({ name: st.name.text, file: path, codes });
  }
}

/** docs/errors.md: `### \`Name\`` headings, each with table rows whose first cell is `` `code` ``. */
function docSections(): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of readFileSync(join(ROOT, DOC), 'utf8').split('\n')) {
    const h = /^### `(\w+)`\s*$/.exec(line);
    if (h !== null) {
      assert.ok(!sections.has(h[1]!), `${DOC}: two sections for ${h[1]!}`);
      current = [];
      sections.set(h[1]!, current);
      continue;
    }
    if (line.startsWith('#')) current = undefined;
    const row = /^\| `([a-z0-9_]+)` \|/.exec(line);
    if (row !== null) {
      assert.ok(current !== undefined, `${DOC}: a code row outside a union section: ${line}`);
      current.push(row[1]!);
    }
  }
  return sections;
}

void test('the code unions are found (every module with errors declares one)', () => {
  const files = new Set(unions.map((u) => u.file));
  for (const f of [
    'src/encoding/errors.ts',
    'src/crypto/errors.ts',
    'src/note/errors.ts',
    'src/tlog/errors.ts',
    'src/anchor/errors.ts',
    'src/keys/errors.ts',
    'src/server/errors.ts',
    'src/witness/errors.ts',
    'src/anchoring/errors.ts',
    'src/cosign/errors.ts',
    'src/bridge/errors.ts',
    'src/federation/errors.ts',
    'src/release/errors.ts',
    'src/cli/errors.ts',
  ]) {
    assert.ok(files.has(f), `${f} declares no exported …Code union`);
  }
  const names = unions.map((u) => u.name);
  assert.deepEqual(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
    'two unions with one name',
  );
});

void test(`every code union is documented in ${DOC}, code for code`, () => {
  const sections = docSections();
  const problems: string[] = [];
  for (const u of unions) {
    const rows = sections.get(u.name);
    if (rows === undefined && u.codes.length === 0) continue; // only names other unions
    if (rows === undefined) {
      problems.push(`${u.name} (${u.file}) has no section`);
      continue;
    }
    for (const c of u.codes) if (!rows.includes(c)) problems.push(`${u.name}: \`${c}\` (${u.file}) is not documented`);
    for (const c of rows) if (!u.codes.includes(c)) problems.push(`${u.name}: \`${c}\` is documented but not in the union`);
    const dup = rows.filter((c, i) => rows.indexOf(c) !== i);
    if (dup.length > 0) problems.push(`${u.name}: rows repeated: ${dup.join(', ')}`);
  }
  for (const name of sections.keys())
    if (!unions.some((u) => u.name === name)) problems.push(`section ${name}: no such union in a src/**/errors.ts`);
  assert.deepEqual(problems, []);
});

/** A class that extends ProtocolError directly and does not narrow `code` lets any string through. */
void test('every error class is typed to a code union', () => {
  const problems: string[] = [];
  for (const { path, sf } of sources) {
    const visit = (n: ts.Node): void => {
      if (
        ts.isNewExpression(n) &&
        ts.isIdentifier(n.expression) &&
        (n.expression.text === 'ProtocolError' || n.expression.text === 'CodedError')
      ) {
        problems.push(`${path}: new ${n.expression.text}(…) — throw the module's own class`);
      }
      if (ts.isClassDeclaration(n) && n.heritageClauses !== undefined) {
        const base = n.heritageClauses.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
        const baseName = base !== undefined && ts.isIdentifier(base.expression) ? base.expression.text : undefined;
        const cls = n.name?.text ?? '(anonymous)';
        if (baseName === 'CodedError') {
          const arg = base?.typeArguments?.[0];
          if (arg === undefined || arg.kind === ts.SyntaxKind.StringKeyword)
            problems.push(`${path}: ${cls} extends CodedError without a code union`);
        } else if (baseName === 'ProtocolError') {
          // The two bases themselves: CodedError, and HttpProblem (each route's codes are its module's union).
          const exempt = (path === 'src/errors.ts' && cls === 'CodedError') || (path === 'src/server/errors.ts' && cls === 'HttpProblem');
          const narrows = n.members.some(
            (m) =>
              ts.isPropertyDeclaration(m) &&
              m.name.getText() === 'code' &&
              m.type !== undefined &&
              m.type.kind !== ts.SyntaxKind.StringKeyword,
          );
          if (!exempt && !narrows)
            problems.push(`${path}: ${cls} extends ProtocolError with a free string code (extend CodedError<YourCode>)`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  assert.deepEqual(problems, []);
});

/**
 * `e instanceof ProtocolError && e.code === 'x'` matches a string against any module's codes, and a
 * typo or a renamed code still compiles. Known cases being removed by work in progress (an entry
 * that no longer matches can simply be deleted).
 */
const PENDING_STRING_MATCHES: readonly { file: string; code: string; owner: string }[] = [];

void test('no string matching on ProtocolError codes', () => {
  const problems: string[] = [];
  const isProtocolErrorTest = (n: ts.Expression): boolean =>
    ts.isBinaryExpression(n) &&
    n.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword &&
    ts.isIdentifier(n.right) &&
    n.right.text === 'ProtocolError';
  for (const { path, sf } of sources) {
    const visit = (n: ts.Node): void => {
      if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken && isProtocolErrorTest(n.left)) {
        const scan = (m: ts.Node): void => {
          if (
            ts.isBinaryExpression(m) &&
            [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(m.operatorToken.kind) &&
            ts.isPropertyAccessExpression(m.left) &&
            m.left.name.text === 'code' &&
            ts.isStringLiteral(m.right)
          ) {
            const code = m.right.text;
            if (!PENDING_STRING_MATCHES.some((p) => p.file === path && p.code === code)) {
              const line = sf.getLineAndCharacterOfPosition(m.getStart()).line + 1;
              problems.push(`${path}:${line}: instanceof ProtocolError && .code === '${code}' — use the owning module's class`);
            }
          }
          ts.forEachChild(m, scan);
        };
        scan(n.right);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  assert.deepEqual(problems, []);
});

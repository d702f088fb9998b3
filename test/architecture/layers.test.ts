// The layer rules of docs/ARCHITECTURE.md, checked on the import graph of src/ (import-graph.ts):
// no import cycle between files or between folders, no import that reaches up a layer, and the
// pure folders (protocol code, HTML rendering) import no I/O. The layer order below is the
// diagram of docs/ARCHITECTURE.md as data: change both together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { findCycles, readImportGraph, type ImportEdge } from './import-graph.ts';

interface Layer {
  name: string;
  /** Folders (`src/x`) and top-level files (`src/x.ts`) of this layer. */
  members: readonly string[];
  /** Pure layers: the only Node built-ins and packages their files may import. */
  pure?: { node: readonly string[]; packages: readonly string[] };
}

/** Node built-ins that do no I/O: hashing and signatures, and Buffer (also a global). */
const PURE_NODE = ['node:crypto', 'node:buffer'];

/**
 * Bottom to top. A file may import its own layer and the layers below it, never one above. Within
 * a layer, folders may import each other as long as the folders form no cycle.
 */
const LAYERS: readonly Layer[] = [
  { name: 'base', members: ['src/errors.ts', 'src/version.ts'], pure: { node: [], packages: [] } },
  {
    name: 'protocol',
    members: ['src/encoding', 'src/crypto', 'src/tlog', 'src/note', 'src/anchor', 'src/keri'],
    // @noble/hashes: BLAKE3 for KERI SAIDs (node:crypto has none).
    pure: { node: PURE_NODE, packages: ['typebox', '@noble/hashes'] },
  },
  // The portable verifier (`anchor-witness/verify`): WebCrypto only, so it runs in a browser too.
  { name: 'portable verifier', members: ['src/verify'], pure: { node: [], packages: [] } },
  { name: 'rendering', members: ['src/pages'], pure: { node: PURE_NODE, packages: [] } },
  // Below everything that serves: the SDK verifies what nodes sign and never imports server code.
  { name: 'client SDK', members: ['src/client'] },
  { name: 'infrastructure', members: ['src/store', 'src/server', 'src/config', 'src/keys', 'src/release', 'src/registry', 'src/bastion'] },
  { name: 'log', members: ['src/log'] },
  {
    name: 'roles and nodes',
    members: ['src/anchoring', 'src/cosign', 'src/log-witness', 'src/kel-witness', 'src/bridge', 'src/witness', 'src/federation'],
  },
  { name: 'entry points', members: ['src/cli', 'src/index.ts'] },
];

interface Pending {
  from: string;
  /** A file path, `node:…` or a package name. */
  to: string;
  /** The helper or issue that removes it. */
  owner: string;
  why: string;
}

/**
 * Known violations being removed by work in progress. Each entry must still match a violation (the
 * test fails when it no longer does, so the list only shrinks); never add one to get a change in.
 */
const PENDING: readonly Pending[] = [];

const ROOT = join(import.meta.dirname, '..', '..');
const graph = readImportGraph(ROOT);

const layerIndex = new Map<string, number>();
LAYERS.forEach((l, i) => {
  for (const m of l.members) layerIndex.set(m, i);
});

/** The declared member (folder or top-level file) a file of src/ belongs to. */
function memberOf(file: string): string | undefined {
  const parts = file.split('/');
  const member = parts.length === 2 ? file : `${parts[0]!}/${parts[1]!}`;
  return layerIndex.has(member) ? member : undefined;
}

const targetName = (e: ImportEdge): string => (e.target.kind === 'file' ? e.target.path : e.target.name);
const show = (e: ImportEdge): string => `${e.from} imports '${e.specifier}'`;
const isPending = (e: ImportEdge): boolean => PENDING.some((p) => p.from === e.from && p.to === targetName(e));

/** Every violation of the layer and purity rules, PENDING ones included. */
function violations(): { edge: ImportEdge; rule: string }[] {
  const out: { edge: ImportEdge; rule: string }[] = [];
  for (const e of graph.edges) {
    const fromMember = memberOf(e.from);
    if (fromMember === undefined) continue;
    const fromLayer = LAYERS[layerIndex.get(fromMember)!]!;
    if (e.target.kind === 'file') {
      const toMember = memberOf(e.target.path);
      if (toMember === undefined) continue;
      const toLayer = LAYERS[layerIndex.get(toMember)!]!;
      if (layerIndex.get(toMember)! > layerIndex.get(fromMember)!) {
        out.push({
          edge: e,
          rule: `upward: layer '${fromLayer.name}' (${fromMember}) may not import layer '${toLayer.name}' (${toMember})`,
        });
      }
    } else if (fromLayer.pure !== undefined) {
      const allowed = e.target.kind === 'node' ? fromLayer.pure.node : fromLayer.pure.packages;
      if (!allowed.includes(e.target.name)) {
        out.push({
          edge: e,
          rule: `impure: layer '${fromLayer.name}' may import only ${[...fromLayer.pure.node, ...fromLayer.pure.packages].join(', ') || 'code of its own or lower layers'}`,
        });
      }
    }
  }
  return out;
}

void test('every file of src/ belongs to a declared layer', () => {
  const undeclared = graph.files.filter((f) => memberOf(f) === undefined);
  assert.deepEqual(undeclared, [], 'place these in LAYERS (and in the diagram of docs/ARCHITECTURE.md)');
});

void test('every relative import names a file of src/', () => {
  const known = new Set(graph.files);
  const dangling = graph.edges.filter((e) => e.target.kind === 'file' && !known.has(e.target.path)).map(show);
  assert.deepEqual(dangling, []);
});

void test('no import cycle between files', () => {
  const arrows = new Map<string, Set<string>>();
  for (const e of graph.edges) {
    if (e.target.kind !== 'file') continue;
    let s = arrows.get(e.from);
    if (s === undefined) arrows.set(e.from, (s = new Set()));
    s.add(e.target.path);
  }
  const cycles = findCycles(graph.files, arrows).map((c) => c.join(' -> '));
  assert.deepEqual(cycles, [], 'break each cycle: move what both sides share into a module both import');
});

void test('no import cycle between folders', () => {
  const arrows = new Map<string, Set<string>>();
  const via = new Map<string, string>();
  for (const e of graph.edges) {
    if (e.target.kind !== 'file') continue;
    const a = memberOf(e.from);
    const b = memberOf(e.target.path);
    if (a === undefined || b === undefined || a === b) continue;
    let s = arrows.get(a);
    if (s === undefined) arrows.set(a, (s = new Set()));
    s.add(b);
    if (!via.has(`${a} ${b}`)) via.set(`${a} ${b}`, show(e));
  }
  const cycles = findCycles([...layerIndex.keys()], arrows).map((c) =>
    c
      .slice(1)
      .map((b, i) => `${c[i]!} -> ${b} (${via.get(`${c[i]!} ${b}`)!})`)
      .join('; '),
  );
  assert.deepEqual(cycles, []);
});

void test('no import reaches up a layer, and pure layers import no I/O', () => {
  const found = violations()
    .filter((v) => !isPending(v.edge))
    .map((v) => `${show(v.edge)}: ${v.rule}`);
  assert.deepEqual(found, [], 'see docs/ARCHITECTURE.md, "Layers"');
});

void test('every PENDING exception still matches a violation (remove the ones fixed)', () => {
  const all = violations();
  const stale = PENDING.filter((p) => !all.some((v) => v.edge.from === p.from && targetName(v.edge) === p.to));
  assert.deepEqual(stale, []);
});

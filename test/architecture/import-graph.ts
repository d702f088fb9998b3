/**
 * The import graph of src/, as the layer check (layers.test.ts) reads it: every .ts file under src/
 * with what it imports: `import … from`, `import type`, `export … from`, side-effect imports and
 * dynamic `import('…')`. The specifiers come from the TypeScript scanner (ts.preProcessFile), so
 * import-shaped text inside strings, template literals and comments is not mistaken for an import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** What one import names: a file of src/ (repository-relative path), a Node built-in or a package. */
export type ImportTarget = { kind: 'file'; path: string } | { kind: 'node'; name: string } | { kind: 'package'; name: string };

export interface ImportEdge {
  /** Repository-relative path of the importing file, e.g. `src/note/vkey.ts`. */
  from: string;
  /** The specifier as written. */
  specifier: string;
  target: ImportTarget;
}

export interface ImportGraph {
  /** Every .ts file under src/, repository-relative, sorted. */
  files: string[];
  edges: ImportEdge[];
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return listTs(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

const toPosix = (p: string): string => p.split(sep).join('/');

function classify(root: string, fromAbs: string, specifier: string): ImportTarget {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    return { kind: 'file', path: toPosix(relative(root, resolve(dirname(fromAbs), specifier))) };
  }
  if (specifier.startsWith('node:') || isBuiltin(specifier)) {
    return { kind: 'node', name: specifier.startsWith('node:') ? specifier : `node:${specifier}` };
  }
  // `@scope/name/sub` → `@scope/name`; `name/sub` → `name`.
  const parts = specifier.split('/');
  return { kind: 'package', name: specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]! };
}

/** Read the import graph of `<root>/src`. */
export function readImportGraph(root: string): ImportGraph {
  const absFiles = listTs(join(root, 'src')).sort();
  const edges: ImportEdge[] = [];
  for (const abs of absFiles) {
    const from = toPosix(relative(root, abs));
    const info = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true);
    for (const imported of info.importedFiles) {
      edges.push({ from, specifier: imported.fileName, target: classify(root, abs, imported.fileName) });
    }
  }
  return { files: absFiles.map((f) => toPosix(relative(root, f))), edges };
}

/**
 * The import cycles among `nodes` (strongly connected components of more than one node, or a node
 * importing itself), each as a closed path `a → b → … → a` through the component.
 */
export function findCycles(nodes: readonly string[], arrows: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  // Tarjan's algorithm (recursive: the graph is a few hundred files).
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of arrows.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || arrows.get(v)?.has(v) === true) components.push(component);
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return components.map((c) => closedPath(new Set(c), arrows));
}

/** One cycle through a strongly connected component, found by a breadth-first walk back to its first node. */
function closedPath(component: ReadonlySet<string>, arrows: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of arrows.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = cameFrom.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

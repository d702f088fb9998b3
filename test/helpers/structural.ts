/**
 * Structurally wrong JSON for decoder tests (issue 25 item 18): every member of a valid document
 * (and the document itself) replaced by null, a boolean, numbers, strings, an empty array, an
 * empty object, the original wrapped in an array, or removed. A decoder of untrusted JSON must
 * answer each with its module's typed error, never a TypeError, and must refuse every mutation
 * that changes a member's JSON type (`typeChanged`).
 */

export type JsonType = 'missing' | 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

export function jsonType(v: unknown): JsonType {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'boolean' | 'number' | 'string' | 'object';
}

export interface StructuralMutation {
  /** JSON pointer of the mutated member ('' for the document). */
  pointer: string;
  label: string;
  doc: unknown;
  before: JsonType;
  after: JsonType;
  /** The member's JSON type changed (a missing member counts as a change). */
  typeChanged: boolean;
}

const REPLACEMENTS: readonly unknown[] = [null, true, 0, 12, -1, 1.5, '', 'x', [], {}];

/** Every structural mutation of `doc` (a parsed JSON value), depth first. */
export function* structuralMutations(doc: unknown, path: readonly string[] = []): Generator<StructuralMutation> {
  const pointer = path.map((p) => `/${p}`).join('');
  const at = (root: unknown): unknown => path.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], root);
  const original = at(doc);
  const make = (label: string, value: unknown, remove = false): StructuralMutation => {
    if (path.length === 0) {
      return {
        pointer,
        label,
        doc: value,
        before: jsonType(original),
        after: jsonType(value),
        typeChanged: jsonType(value) !== jsonType(original),
      };
    }
    const copy = structuredClone(doc);
    const parent = path.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], copy) as Record<string, unknown>;
    const key = path.at(-1)!;
    if (remove) Reflect.deleteProperty(parent, key);
    else parent[key] = value;
    const after = remove ? 'missing' : jsonType(value);
    return { pointer, label, doc: copy, before: jsonType(original), after, typeChanged: after !== jsonType(original) };
  };
  for (const value of REPLACEMENTS) yield make(`${pointer || '/'} := ${JSON.stringify(value)}`, value);
  if (path.length > 0) {
    yield make(`${pointer} := [original]`, [original]);
    const parent = path.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc);
    if (!Array.isArray(parent)) yield make(`${pointer} removed`, undefined, true);
  }
  if (typeof original === 'object' && original !== null) {
    for (const key of Object.keys(original)) yield* structuralMutations(doc, [...path, key]);
  }
}

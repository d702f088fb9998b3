/**
 * Reading operator files (registry, known logs): JSON (strict: duplicate keys refused) or YAML,
 * chosen by extension (.yaml/.yml → YAML, otherwise JSON).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseStrictJson } from '../encoding/json.ts';

export function readDocument(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  if (/\.ya?ml$/i.test(path)) return parseYaml(text, { uniqueKeys: true, strict: true, maxAliasCount: 100 }) as unknown;
  return parseStrictJson(text, { maxDepth: 64 });
}

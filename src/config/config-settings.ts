/**
 * A `--config` file (JSON or YAML): an object whose keys are flag names (kebab or camel case:
 * `max-in-flight`, `maxInFlight`, `no-listen`) and whose values are what the flag takes — a string
 * or a number; a list (or a comma-separated string) for a repeatable flag; a boolean (or 1/0,
 * "true"/"false") for a switch. Which keys exist and how each value is parsed come from the
 * command's option table (src/config/option-table.ts): a key for every flag but `--config`.
 */
import { readDocument } from './config-file.ts';
import { readInputFile } from './input-file.ts';
import { flagName, parseSwitch, splitList, type OptionRow, type OptionTable } from './option-table.ts';

export interface ConfigSetting {
  /** The row's key (camel case). */
  key: string;
  /** As written in the file. */
  fileKey: string;
  row: OptionRow;
  /** Parsed: the row's type; a list's entries; a switch's boolean. */
  value: unknown;
}

/** The file keys of a table: each flag's name (kebab case) and its row key (camel case) → the row key. */
export function configFileKeys(table: OptionTable): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [key, row] of Object.entries(table)) {
    if (row.inConfigFile === false) continue;
    keys.set(flagName(row.flags), key);
    keys.set(key, key);
  }
  return keys;
}

/** Read and check `path` against `table`; every problem is `--config PATH: …` through `coded`. */
export function readConfigSettings(path: string, table: OptionTable, coded: (message: string) => Error): ConfigSetting[] {
  const doc = readInputFile('--config', path, () => readDocument(path), coded);
  const fail = (m: string): never => {
    throw coded(`--config ${path}: ${m}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) fail('must be an object of flag names');
  const keys = configFileKeys(table);
  const out: ConfigSetting[] = [];
  for (const [fileKey, raw] of Object.entries(doc as Record<string, unknown>)) {
    const key = keys.get(fileKey);
    if (key === undefined) fail(`unknown setting ${JSON.stringify(fileKey)}`);
    const row = table[key!]!;
    try {
      out.push({ key: key!, fileKey, row, value: settingValue(row, raw) });
    } catch (e) {
      fail(`${fileKey}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return out;
}

const scalarText = (v: unknown): string | undefined =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;

function settingValue(row: OptionRow, raw: unknown): unknown {
  if (row.kind === 'list') {
    const entries = Array.isArray(raw)
      ? raw.map((x: unknown) => scalarText(x) ?? JSON.stringify(x))
      : splitList(scalarText(raw) ?? fail('must be a list (or a comma-separated string)'));
    return entries.flatMap((e) => row.parse(e) as string[]);
  }
  const text = scalarText(raw);
  if (row.kind === 'switch' || row.kind === 'negation') return parseSwitch(text ?? fail('must be true or false'));
  return row.parse(text ?? fail('must be a string or a number'));
}

function fail(m: string): never {
  throw new Error(m);
}

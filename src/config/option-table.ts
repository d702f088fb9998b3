/**
 * Options declared once (issue 26 item 2). A command's options are a table: one row per flag, with
 * its parser, default, help and `--help` group; its environment variable follows from the flag by
 * the SPEC §9 rule (prefix + the flag upper-cased, `-` → `_`). The commander options
 * (src/cli/option-command.ts), the keys a `--config` file may set (the flag names) and the typed
 * values a command builds its configuration from are all derived from the rows, so adding an
 * option is adding a row. The key of a row is its flag's name in camel case (`--kel-max-heap` →
 * `kelMaxHeap`, `--no-listen` → `noListen`). Pure.
 */
import { durationArg, formatDuration, type TimeUnit } from './duration.ts';

/** The `--help` groups, in the order they are shown: essentials first. */
export const OPTION_GROUPS = {
  essentials: 'Essentials:',
  http: 'HTTP limits (protocol §2):',
  anchor: 'Anchor role:',
  kel: 'Key event logs (protocol §3.5):',
  kelWitness: 'KERI witness role (protocol §3.6):',
  cosign: 'Cosign role (protocol §5):',
  bastion: 'Bastion (protocol §5.6):',
  logWitnesses: 'Log witnesses (protocol §4.1):',
  tokens: 'Tokens (protocol §7):',
  signers: 'Keys outside the process (protocol §1.1):',
  operations: 'Operations:',
} as const;
export type OptionGroup = keyof typeof OPTION_GROUPS;

/**
 * `value`: one value (`--name NAME`); `list`: repeatable and comma-separated, a YAML/JSON list in a
 * config file; `switch`: a boolean (`--dev`); `negation`: a `--no-…` switch (`--no-listen`), true
 * when given.
 */
export type OptionKind = 'value' | 'list' | 'switch' | 'negation';

export interface OptionRow<T = unknown> {
  /** commander flags: `--data-dir <dir>`, `--dev`, `--no-listen`. */
  readonly flags: string;
  readonly help: string;
  readonly group: OptionGroup;
  readonly kind: OptionKind;
  /** The text of a flag, variable or config-file value → the typed value (a list: one entry's text). Throws on bad input. */
  readonly parse: (text: string) => T;
  readonly default: T | undefined;
  /** How `--help` shows the default (when the value is not self-explanatory). */
  readonly defaultHelp?: string | undefined;
  readonly choices?: readonly string[] | undefined;
  /** A time flag: takes durations (`90s`, `5m`, `1h`, `7d`); bare integers are in this unit. */
  readonly time?: TimeUnit | undefined;
  /** false: not a `--config` file key (`--config` itself). */
  readonly inConfigFile?: boolean | undefined;
}

/** A row with a default: its value is never undefined. */
export interface DefaultedRow<T> extends OptionRow<T> {
  readonly default: T;
}

export type OptionTable = Readonly<Record<string, OptionRow>>;

/** The typed values of a table: a row's parsed type, `| undefined` unless it has a default. */
export type OptionValues<Tbl extends OptionTable> = {
  -readonly [K in keyof Tbl]: Tbl[K] extends DefaultedRow<infer T> ? T : Tbl[K] extends OptionRow<infer T> ? T | undefined : never;
};

interface RowOptions<T> {
  default?: T;
  defaultHelp?: string;
  choices?: readonly string[];
  inConfigFile?: boolean;
}

/** `--kel-max-heap <mib>` → `kelMaxHeap`; `--no-listen` → `noListen`. */
export function rowKey(flags: string): string {
  return flagName(flags).replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `--kel-max-heap <mib>` → `kel-max-heap` (the config-file key). */
export function flagName(flags: string): string {
  const m = /^--([a-z0-9][a-z0-9-]*)(?: [<[].*)?$/.exec(flags);
  if (m === null) throw new Error(`option flags must be --name [<arg>], got ${JSON.stringify(flags)}`);
  return m[1]!;
}

function build<T>(
  flags: string,
  help: string,
  group: OptionGroup,
  kind: OptionKind,
  parse: (text: string) => T,
  o: RowOptions<T> & { time?: TimeUnit } = {},
): OptionRow<T> {
  flagName(flags);
  return {
    flags,
    help,
    group,
    kind,
    parse,
    default: o.default,
    defaultHelp: o.defaultHelp,
    choices: o.choices,
    time: o.time,
    inConfigFile: o.inConfigFile,
  };
}

/** A value parsed by `parse` (a string when none). */
export function value<T>(
  flags: string,
  help: string,
  group: OptionGroup,
  parse: (text: string) => T,
  o: RowOptions<T> & { default: T },
): DefaultedRow<T>;
export function value<T>(flags: string, help: string, group: OptionGroup, parse: (text: string) => T, o?: RowOptions<T>): OptionRow<T>;
export function value<T>(flags: string, help: string, group: OptionGroup, parse: (text: string) => T, o: RowOptions<T> = {}): OptionRow<T> {
  return build(flags, help, group, 'value', parse, o);
}

const asText = (text: string): string => text;

export function text(flags: string, help: string, group: OptionGroup, o: RowOptions<string> & { default: string }): DefaultedRow<string>;
export function text(flags: string, help: string, group: OptionGroup, o?: RowOptions<string>): OptionRow<string>;
export function text(flags: string, help: string, group: OptionGroup, o: RowOptions<string> = {}): OptionRow<string> {
  return build(flags, help, group, 'value', asText, o);
}

/** One of `choices`. */
export function choice<C extends string>(flags: string, help: string, group: OptionGroup, choices: readonly C[], def: C): DefaultedRow<C> {
  const parse = (t: string): C => {
    if (!(choices as readonly string[]).includes(t))
      throw new Error(`argument ${JSON.stringify(t)} is invalid. Allowed choices are ${choices.join(', ')}.`);
    return t as C;
  };
  return build(flags, help, group, 'value', parse, { default: def, choices }) as DefaultedRow<C>;
}

/** A whole number within [min, max]. */
export function intArg(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (t: string): number => {
    if (!/^(0|[1-9][0-9]*)$/.test(t)) throw new Error(`not an integer: ${t}`);
    const n = Number(t);
    if (n < min || n > max) throw new Error(`${t} is outside ${min}..${max}`);
    return n;
  };
}

export function int(
  flags: string,
  help: string,
  group: OptionGroup,
  range: [number, number?],
  o: RowOptions<number> & { default: number },
): DefaultedRow<number>;
export function int(flags: string, help: string, group: OptionGroup, range: [number, number?], o?: RowOptions<number>): OptionRow<number>;
export function int(
  flags: string,
  help: string,
  group: OptionGroup,
  range: [number, number?],
  o: RowOptions<number> = {},
): OptionRow<number> {
  return build(flags, help, group, 'value', intArg(range[0], range[1]), o);
}

/**
 * A time flag (SPEC §4.1): a duration (`90s`, `5m`, `1h`, `7d`) or a bare integer in `unit`, within
 * [min, max] of that unit; the value is in `unit`.
 */
export function time(
  flags: string,
  help: string,
  group: OptionGroup,
  unit: TimeUnit,
  range: [number, number?],
  o: RowOptions<number> & { default: number },
): DefaultedRow<number>;
export function time(
  flags: string,
  help: string,
  group: OptionGroup,
  unit: TimeUnit,
  range: [number, number?],
  o?: RowOptions<number>,
): OptionRow<number>;
export function time(
  flags: string,
  help: string,
  group: OptionGroup,
  unit: TimeUnit,
  range: [number, number?],
  o: RowOptions<number> = {},
): OptionRow<number> {
  const defaultHelp = o.defaultHelp ?? (o.default === undefined ? undefined : formatDuration(o.default, unit));
  // a flag typed as a duration states its range in durations; one whose name carries a unit, in that unit
  const rangeIn = flags.endsWith('<duration>') ? 'durations' : 'unit';
  return build(flags, help, group, 'value', durationArg(range[0], range[1], unit, rangeIn), { ...o, defaultHelp, time: unit });
}

/** Repeatable, comma-separated (`--x a,b --x c`, `X=a,b,c`); a list in a config file. */
export function list(
  flags: string,
  help: string,
  group: OptionGroup,
  o: RowOptions<string[]> & { default: string[] },
): DefaultedRow<string[]>;
export function list(flags: string, help: string, group: OptionGroup, o?: RowOptions<string[]>): OptionRow<string[]>;
export function list(flags: string, help: string, group: OptionGroup, o: RowOptions<string[]> = {}): OptionRow<string[]> {
  return build(flags, help, group, 'list', splitList, o);
}

/** `a, b,,c` → [a, b, c]. */
export function splitList(t: string): string[] {
  return t
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function parseSwitch(t: string): boolean {
  if (/^(1|true)$/i.test(t)) return true;
  if (/^(0|false)$/i.test(t)) return false;
  throw new Error(`must be 1/true or 0/false, got ${JSON.stringify(t)}`);
}

/** A boolean (`--dev`), false unless given. */
export function flag(flags: string, help: string, group: OptionGroup): DefaultedRow<boolean> {
  return build(flags, help, group, 'switch', parseSwitch, { default: false }) as DefaultedRow<boolean>;
}

/** A `--no-…` switch: true when given (`--no-listen` → noListen). */
export function negation(flags: string, help: string, group: OptionGroup): DefaultedRow<boolean> {
  if (!flagName(flags).startsWith('no-')) throw new Error(`a negation is a --no-… flag, got ${flags}`);
  return build(flags, help, group, 'negation', parseSwitch, { default: false }) as DefaultedRow<boolean>;
}

/** The rows of a table in `--help` order: by group (OPTION_GROUPS order), then as declared. */
export function rowsInHelpOrder(table: OptionTable): [string, OptionRow][] {
  const order = Object.keys(OPTION_GROUPS);
  return Object.entries(table)
    .map((e, i) => ({ e, i }))
    .sort((a, b) => order.indexOf(a.e[1].group) - order.indexOf(b.e[1].group) || a.i - b.i)
    .map((x) => x.e);
}

/** A table whose every key is its row's flag name in camel case (throws otherwise: a mis-keyed row). */
export function checkTable<Tbl extends OptionTable>(table: Tbl): Tbl {
  for (const [key, row] of Object.entries(table))
    if (rowKey(row.flags) !== key) throw new Error(`option table: row ${key} has flag ${row.flags} (its key must be ${rowKey(row.flags)})`);
  return table;
}

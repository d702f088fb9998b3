/**
 * A command's options from its table (src/config/option-table.ts): the commander options (with
 * their variables, defaults and `--help` groups), a `--config` file applied under flags and
 * variables, and the typed values read back. One place; the commands declare rows only.
 */
import type { Command, Option } from 'commander';
import { readConfigSettings } from '../config/config-settings.ts';
import { OPTION_GROUPS, rowsInHelpOrder, type OptionRow, type OptionTable, type OptionValues } from '../config/option-table.ts';
import { EnvCommand, envName } from './options.ts';

/** A value parsed from a flag or a variable. */
class Parsed {
  readonly value: unknown;
  constructor(value: unknown) {
    this.value = value;
  }
}

/** What `option` makes of `text` given on the command line (the table's parsed value; tests). */
export function parseOptionText(option: Option, text: string): unknown {
  const v: unknown = option.parseArg === undefined ? text : option.parseArg(text, undefined as never);
  return v instanceof Parsed ? v.value : v;
}

/** The flag named in a parser's error: `--kel-poll-seconds: not a duration: "5x" (…)`. */
function named<T>(option: Option, parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (e) {
      if (e instanceof Error && !e.message.startsWith(option.long!)) e.message = `${option.long!}: ${e.message}`;
      throw e;
    }
  };
}

function addRow(cmd: Command, row: OptionRow): void {
  const option = cmd.createOption(row.flags, row.help).helpGroup(OPTION_GROUPS[row.group]);
  // commander shows a default and a variable only for valued options it reads them for itself
  const extra = [
    row.kind === 'list' && row.defaultHelp !== undefined ? `default: ${row.defaultHelp}` : '',
    option.envVar === undefined && cmd instanceof EnvCommand && cmd.envPrefix !== '' ? `env: ${envName(cmd.envPrefix, option)}` : '',
  ].filter((x) => x !== '');
  if (extra.length > 0) option.description = `${row.help} (${extra.join(', ')})`;
  const attr = option.attributeName();
  if (row.kind === 'list') {
    const parse = named(option, row.parse as (t: string) => string[]);
    // a list's default is not commander's: the first value replaces it rather than joining it
    option.argParser((t: string, previous: string[] | undefined) => [
      ...(cmd.getOptionValueSource(attr) === 'default' ? [] : (previous ?? [])),
      ...parse(t),
    ]);
  } else if (row.kind === 'value') {
    if (row.choices !== undefined) option.choices(row.choices); // shown in --help; the row's parser checks them
    // boxed: commander turns a parser's null (`--rate-limit 0`: off) into ''
    const parse = named(option, row.parse);
    option.argParser((t: string) => new Parsed(parse(t)));
    if (row.default !== undefined) option.default(row.default, row.defaultHelp);
  }
  cmd.addOption(option);
}

/** Add every row of `table` to `cmd`, essentials first (OPTION_GROUPS order). */
export function addOptionTable(cmd: Command, table: OptionTable): Command {
  for (const [, row] of rowsInHelpOrder(table)) addRow(cmd, row);
  return cmd;
}

const optionOf = (cmd: Command, row: OptionRow): Option => {
  const o = cmd.options.find((x) => x.flags === row.flags);
  if (o === undefined) throw new Error(`${row.flags} is not an option of ${cmd.name()}`);
  return o;
};

/** The typed values of `table` on `cmd` after parsing: flag, variable, config file, else the row's default. */
export function optionValues<Tbl extends OptionTable>(cmd: Command, table: Tbl): OptionValues<Tbl> {
  const out: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(table)) {
    const raw: unknown = cmd.getOptionValue(optionOf(cmd, row).attributeName());
    const v = raw instanceof Parsed ? raw.value : raw;
    if (row.kind === 'negation') out[key] = v === false;
    else if (row.kind === 'switch') out[key] = v === true;
    // `false`: the value of a `--x` whose `--no-x` was given (--listen, --no-listen)
    else out[key] = v === undefined || v === false ? row.default : v;
  }
  return out as OptionValues<Tbl>;
}

/**
 * A config-file list that a flag or a variable replaced (whole, not merged) and so dropped some of
 * its entries: logged as one warning at start.
 */
export interface ReplacedList {
  setting: string;
  /** `--cosign-key` or `AW_COSIGN_KEY`. */
  by: string;
  file: string;
  fileValue: string[];
  value: string[];
}

/**
 * Config-file values fill whatever neither a flag nor a variable set. Returns the file's lists that
 * a flag or variable replaced.
 */
export function applyConfigFile(
  cmd: Command,
  table: OptionTable,
  path: string,
  envPrefix: string,
  coded: (message: string) => Error,
): ReplacedList[] {
  const replaced: ReplacedList[] = [];
  for (const s of readConfigSettings(path, table, coded)) {
    const option = optionOf(cmd, s.row);
    const attr = option.attributeName();
    const source = cmd.getOptionValueSource(attr);
    const overridden = source === 'cli' || source === 'env';
    if (overridden) {
      const current = (cmd.getOptionValue(attr) as unknown[] | undefined) ?? [];
      if (s.row.kind === 'list' && (s.value as string[]).some((x) => !current.includes(x)))
        replaced.push({
          setting: option.long!,
          by: source === 'cli' ? option.long! : envName(envPrefix, option),
          file: path,
          fileValue: s.value as string[],
          value: current as string[],
        });
      continue;
    }
    if (s.row.kind === 'negation') {
      if (s.value === true) cmd.setOptionValueWithSource(attr, false, 'config');
      continue;
    }
    cmd.setOptionValueWithSource(attr, s.value, 'config');
  }
  return replaced;
}

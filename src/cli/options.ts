/**
 * SPEC §9: every flag also reads an environment variable — prefix + the flag upper-cased with
 * `-` → `_` (AW_MAX_BODY_BYTES, TB_ISSUER). Repeatable flags take a comma-separated list there,
 * booleans `1`/`true` (or `0`/`false`). Flags win over variables.
 *
 * `EnvCommand` gives every valued option commander's own `.env()` (so required options can come
 * from the environment); booleans are read in a preAction hook, because commander treats any value
 * of a boolean's variable as "true".
 */
import { Command, Option } from 'commander';

/** `--max-body-bytes` → `<prefix>MAX_BODY_BYTES`; `--no-proof-of-possession` → `<prefix>NO_PROOF_OF_POSSESSION`. */
export function envName(prefix: string, option: Option): string {
  const flag = option.long ?? `--${option.attributeName()}`;
  return prefix + flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase();
}

/** A flag without a value: a plain boolean or a `--no-…` negation. */
const isSwitch = (o: Option): boolean => o.isBoolean() || o.negate;

function parseBool(name: string, text: string): boolean {
  if (/^(1|true)$/i.test(text)) return true;
  if (/^(0|false)$/i.test(text)) return false;
  throw new Error(`${name} must be 1/true or 0/false, got ${JSON.stringify(text)}`);
}

const isMeta = (o: Option): boolean => o.long === '--help' || o.long === '--version';

/** Split comma lists for a repeatable option: `--x a,b --x c` and `X=a,b,c` both give [a,b,c]. */
export function collectList(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  ];
}

export class EnvCommand extends Command {
  envPrefix = '';

  override createCommand(name?: string): EnvCommand {
    const c = new EnvCommand(name);
    c.envPrefix = this.envPrefix;
    return c;
  }

  /**
   * Required options are checked in the program's preAction hook (after the environment is read),
   * all at once, rather than by commander one at a time.
   */
  override addOption(option: Option): this {
    if (option.mandatory) {
      option.makeOptionMandatory(false);
      (this.requiredOptions ??= []).push(option);
    }
    return super.addOption(option);
  }

  requiredOptions: Option[] | undefined;

  override createOption(flags: string, description?: string): Option {
    const o = new Option(flags, description);
    if (this.envPrefix !== '' && !isSwitch(o) && !isMeta(o)) o.env(envName(this.envPrefix, o));
    return o;
  }
}

/** A root program whose subcommands read `<prefix>FLAG` variables. */
export function envProgram(name: string, prefix: string): EnvCommand {
  const program = new EnvCommand(name);
  program.envPrefix = prefix;
  program.hook('preAction', (_root, action) => {
    const required = action instanceof EnvCommand ? (action.requiredOptions ?? []) : [];
    const missing = required.filter((o) => action.getOptionValue(o.attributeName()) === undefined);
    if (missing.length > 0)
      throw new Error(
        missingFlagsMessage(
          action,
          missing.map((o) => o.attributeName()),
          prefix,
        ),
      );
    for (const option of action.options) {
      if (!isSwitch(option) || isMeta(option)) continue;
      const key = option.attributeName();
      if (action.getOptionValueSource(key) === 'cli') continue;
      const variable = envName(prefix, option);
      const text = process.env[variable];
      if (text === undefined || text === '') continue;
      action.setOptionValueWithSource(key, option.negate ? !parseBool(variable, text) : parseBool(variable, text), 'env');
    }
  });
  return program;
}

/**
 * One line naming every missing required flag of `cmd` (by attribute name, in the order given):
 * `missing required flags: --a <x>, --b <y> (or set P_A, P_B<orElse>)`.
 */
export function missingFlagsMessage(cmd: Command, names: readonly string[], prefix: string, orElse = ''): string {
  const options = names.map((n) => cmd.options.find((o) => o.attributeName() === n)).filter((o): o is Option => o !== undefined);
  const list = options.map((o) => o.flags).join(', ');
  const vars = options.map((o) => envName(prefix, o)).join(', ');
  return `missing required flag${options.length === 1 ? '' : 's'}: ${list} (or set ${vars}${orElse})`;
}

/** Whole numbers within a range: src/config/option-table.ts (one parser for tables and commands). */
export { intArg } from '../config/option-table.ts';

/** Durations (SPEC §4.1, last paragraph) live in src/config/duration.ts; re-exported for the commands. */
export { durationArg, parseDurationSeconds, unitArg } from '../config/duration.ts';

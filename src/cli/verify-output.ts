/**
 * The verdict output of `anchor-witness verify …`: one "OK …" line on stdout when valid, or with
 * `--json` one JSON object `{"valid": true, "command": …, …}`; when invalid, the "INVALID <code>:
 * <reason>" line on stderr as always and, with `--json`, `{"valid": false, "command", "code",
 * "reason", …}` on stdout. Exit codes do not depend on `--json` (0 valid, 1 invalid, 2 unusable
 * input — usage errors print no JSON).
 */
import type { Command } from 'commander';
import { stringifyJson } from '../encoding/json.ts';
import { VerificationError, type VerificationCode } from '../verify/errors.ts';
import { action, oneLine } from './client-io.ts';

export interface Verdict {
  readonly json: boolean;
  /** Valid: the OK line, or the JSON object `{valid: true, command, ...data}`. */
  ok(line: string, data: Record<string, unknown>): void;
  /** Invalid with evidence: prints the JSON verdict with `data` (under --json) and returns the error to throw. */
  invalid(code: VerificationCode, reason: string, data: Record<string, unknown>): VerificationError;
}

export function addJsonOption(cmd: Command): Command {
  return cmd.option('--json', 'print the verdict as one JSON object on stdout ({"valid": true, …} or {"valid": false, "code", "reason"})');
}

const print = (doc: Record<string, unknown>): void => {
  process.stdout.write(stringifyJson(doc) + '\n');
};

/**
 * An action for a verify subcommand (commander passes the options second to last): `fn` reports
 * through the Verdict; a VerificationError it throws (other than `usage`) is also printed as the
 * JSON verdict under --json, then exits 1 as usual.
 */
export function verdictAction<A extends unknown[]>(command: string, fn: (out: Verdict, ...args: A) => Promise<void>) {
  return action(async (...args: A) => {
    const opts = args[args.length - 2] as { json?: boolean } | undefined;
    const json = opts?.json === true;
    const shown = { json: false };
    const out: Verdict = {
      json,
      ok: (line, data) => {
        if (json) print({ valid: true, command, ...data });
        else process.stdout.write(`OK ${line}\n`);
      },
      invalid: (code, reason, data) => {
        if (json) print({ valid: false, command, code, reason: oneLine(reason), ...data });
        shown.json = json;
        return new VerificationError(code, reason);
      },
    };
    try {
      await fn(out, ...args);
    } catch (e) {
      if (json && !shown.json && e instanceof VerificationError) print({ valid: false, command, code: e.code, reason: oneLine(e.message) });
      throw e;
    }
  });
}

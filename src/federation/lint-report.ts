/**
 * The findings of `lint-policy` (SPEC §8) and their report: the finding and result types, the
 * collector the rules add to, the CLI's exit status and one line per finding.
 */
export type Severity = 'error' | 'warning';

export interface Finding {
  rule: 1 | 2 | 3 | 4 | 5;
  id: string;
  severity: Severity;
  /** Index of the statement in `Statement` (null for the document). */
  statement: number | null;
  message: string;
}

export interface LintResult {
  findings: Finding[];
  errors: number;
  warnings: number;
}

export interface LintOptions {
  /** The bridge's issuer: the provider must be this one. */
  issuer?: string;
}

export class Linter {
  readonly findings: Finding[] = [];

  add(rule: Finding['rule'], id: string, severity: Severity, statement: number | null, message: string): void {
    this.findings.push({ rule, id, severity, statement, message });
  }
}

/** Exit status of `lint-policy`: 0 clean (warnings allowed), 1 errors, 2 unparsable. */
export const lintExitCode = (r: LintResult): 0 | 1 => (r.errors > 0 ? 1 : 0);

export function formatFinding(f: Finding): string {
  const where = f.statement === null ? '' : ` Statement[${f.statement}]`;
  return `${f.severity} rule ${f.rule} [${f.id}]${where}: ${f.message}`;
}

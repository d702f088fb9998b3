/**
 * `token-bridge lint-policy` (SPEC §8), pure: a role trust policy in, findings out, each with the
 * number of the trust rule it breaks and a stable id (the five rules and their ids:
 * docs/federation-aws.md). Input that is not a policy at all throws FederationError
 * `policy_unparsable` (the CLI's exit 2).
 */
import { POLICY_VERSION, providerPath } from './aws.ts';
import { checkConditions } from './lint-conditions.ts';
import { asList, extractPolicy, isFederationStatement, isObj, parsePolicyText, statementProvider, unparsable } from './lint-policy-doc.ts';
import type { Obj } from './lint-policy-doc.ts';
import { Linter } from './lint-report.ts';
import type { Finding, LintOptions, LintResult } from './lint-report.ts';
import { checkAction, checkPrincipal } from './lint-statement.ts';

export { extractPolicy, parsePolicyText } from './lint-policy-doc.ts';
export { formatFinding, lintExitCode } from './lint-report.ts';
export type { Finding, LintOptions, LintResult, Severity } from './lint-report.ts';

function lint(policy: Obj, opts: LintOptions): Finding[] {
  const l = new Linter();
  const expectedPath = opts.issuer === undefined ? null : providerPath(opts.issuer);
  if (policy.Version !== POLICY_VERSION) {
    l.add(
      5,
      'version',
      'error',
      null,
      `"Version" must be "${POLICY_VERSION}", got ${policy.Version === undefined ? 'none (IAM then uses 2008-10-17)' : JSON.stringify(policy.Version)}`,
    );
  }
  const statements = asList(policy.Statement);
  if (statements.length === 0) unparsable('"Statement" is empty');
  let relevant = 0;
  const others = new Set<string>();
  statements.forEach((s, i) => {
    if (!isObj(s)) unparsable(`Statement[${i}] must be an object`);
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny')
      unparsable(`Statement[${i}].Effect must be "Allow" or "Deny", got ${JSON.stringify(s.Effect)}`);
    if (s.Effect !== 'Allow' || !isFederationStatement(s)) return;
    const provider = statementProvider(s);
    if (expectedPath !== null && provider !== null && provider.toLowerCase() !== expectedPath.toLowerCase()) {
      // Another identity provider (a role may trust several); with --issuer only this bridge's statements are judged.
      others.add(provider);
      l.add(
        4,
        'other_provider',
        'warning',
        i,
        `this statement trusts the provider ${JSON.stringify(provider)}, not the bridge (${JSON.stringify(expectedPath)}); not checked`,
      );
      return;
    }
    relevant++;
    if ('Resource' in s || 'NotResource' in s)
      l.add(5, 'resource_in_trust_policy', 'warning', i, 'a trust policy has no Resource element; IAM refuses the document');
    const path = checkPrincipal(l, i, s);
    checkAction(l, i, s);
    checkConditions(l, i, s, path ?? expectedPath);
  });
  if (relevant === 0) {
    if (expectedPath !== null && others.size > 0) {
      l.add(
        4,
        'provider_mismatch',
        'error',
        null,
        `no Allow statement trusts the bridge's provider ${JSON.stringify(expectedPath)} (found ${[...others].map((o) => JSON.stringify(o)).join(', ')}): the Federated ARN must be arn:<partition>:iam::<account>:oidc-provider/${expectedPath}`,
      );
    } else {
      l.add(
        5,
        'no_provider_statement',
        'error',
        null,
        'no Allow statement for an OIDC provider (Principal.Federated with sts:AssumeRoleWithWebIdentity)',
      );
    }
  }
  return l.findings;
}

/** Lint a parsed document (see extractPolicy for the accepted shapes). */
export function lintPolicy(doc: unknown, opts: LintOptions = {}): LintResult {
  const findings = lint(extractPolicy(doc), opts);
  const errors = findings.filter((f) => f.severity === 'error').length;
  return { findings, errors, warnings: findings.length - errors };
}

/** Lint policy text; throws FederationError `policy_unparsable` for what is not a policy. */
export function lintPolicyText(text: string, opts: LintOptions = {}): LintResult {
  return lintPolicy(parsePolicyText(text), opts);
}

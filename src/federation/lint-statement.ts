/**
 * The `lint-policy` rules on a federation statement's Principal (one OIDC provider ARN, no scheme)
 * and Action (exactly sts:AssumeRoleWithWebIdentity); its Condition has its own module.
 */
import { PROVIDER_ARN_RE, TAG_SESSION_ACTION, WEB_IDENTITY_ACTION, hasWildcard } from './aws.ts';
import { asList, hasScheme, isObj, stripScheme } from './lint-policy-doc.ts';
import type { Obj } from './lint-policy-doc.ts';
import type { Linter } from './lint-report.ts';

export function checkPrincipal(l: Linter, i: number, s: Obj): string | null {
  if ('NotPrincipal' in s)
    l.add(
      5,
      'not_principal',
      'error',
      i,
      'NotPrincipal in an Allow statement trusts everyone except the principals listed; use "Principal": {"Federated": "<provider ARN>"}',
    );
  const p = s.Principal;
  if (p === undefined) {
    if (!('NotPrincipal' in s))
      l.add(
        5,
        'principal_not_provider',
        'error',
        i,
        'no Principal: it must be {"Federated": "arn:<partition>:iam::<account>:oidc-provider/P"}',
      );
    return null;
  }
  const keys = isObj(p) ? Object.keys(p) : [];
  const federated = isObj(p) ? asList(p.Federated) : [];
  if (!isObj(p) || keys.length !== 1 || keys[0] !== 'Federated' || federated.length !== 1 || typeof federated[0] !== 'string') {
    l.add(
      5,
      'principal_not_provider',
      'error',
      i,
      `Principal must be exactly {"Federated": "<the provider ARN>"} (one provider), got ${JSON.stringify(p)}`,
    );
    const first = federated.find((f): f is string => typeof f === 'string' && PROVIDER_ARN_RE.test(f));
    return first === undefined ? null : stripScheme(PROVIDER_ARN_RE.exec(first)![3]!);
  }
  const arn = federated[0];
  const m = PROVIDER_ARN_RE.exec(arn);
  if (m === null) {
    l.add(
      5,
      'principal_not_provider',
      'error',
      i,
      `Principal.Federated ${JSON.stringify(arn)} is not an IAM OIDC provider ARN (arn:<partition>:iam::<account>:oidc-provider/P)`,
    );
    return null;
  }
  const path = m[3]!;
  if (hasScheme(path)) {
    l.add(
      4,
      'provider_arn_scheme',
      'error',
      i,
      `the provider ARN ${JSON.stringify(arn)} contains a scheme; IAM names providers by the issuer without https:// (oidc-provider/${stripScheme(path)})`,
    );
  }
  return stripScheme(path);
}

export function checkAction(l: Linter, i: number, s: Obj): void {
  if ('NotAction' in s)
    l.add(
      5,
      'not_action',
      'error',
      i,
      `NotAction in an Allow statement allows every action except those listed; use "Action": "${WEB_IDENTITY_ACTION}"`,
    );
  if (s.Action === undefined) {
    if (!('NotAction' in s)) l.add(5, 'action_not_web_identity', 'error', i, `no Action: it must be "${WEB_IDENTITY_ACTION}"`);
    return;
  }
  let web = false;
  let reported = false;
  for (const a of asList(s.Action)) {
    if (typeof a === 'string' && a.toLowerCase() === WEB_IDENTITY_ACTION.toLowerCase()) {
      web = true;
    } else if (typeof a === 'string' && a.toLowerCase() === TAG_SESSION_ACTION.toLowerCase()) {
      l.add(
        5,
        'tag_session',
        'warning',
        i,
        `${TAG_SESSION_ACTION} lets the token set session tags; it is needed only with the bridge's --aws-session-tags (principal tags auths_leaf, auths_caps)`,
      );
    } else {
      reported = true;
      const why = typeof a === 'string' && hasWildcard(a) ? ' (a wildcard grants more than web identity federation)' : '';
      l.add(5, 'action_not_web_identity', 'error', i, `Action ${JSON.stringify(a)} is not ${WEB_IDENTITY_ACTION}${why}`);
    }
  }
  if (!web && !reported) l.add(5, 'action_not_web_identity', 'error', i, `Action must be ${WEB_IDENTITY_ACTION}`);
}

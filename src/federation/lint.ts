/**
 * `token-bridge lint-policy` (SPEC §8), pure: a role trust policy in, findings out, each with the
 * number of the trust rule it breaks and a stable id (the five rules and their ids:
 * docs/federation-aws.md). Input that is not a policy at all throws FederationError
 * `policy_unparsable` (the CLI's exit 2).
 */
import { parseStrictJson } from '../encoding/json.ts';
import {
  POLICY_VERSION,
  PROVIDER_ARN_RE,
  TAG_SESSION_ACTION,
  WEB_IDENTITY_ACTION,
  hasWildcard,
  isBridgeSubject,
  providerPath,
} from './aws.ts';
import { FederationError } from './errors.ts';

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

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function unparsable(message: string): never {
  throw new FederationError('policy_unparsable', message);
}

/**
 * The trust policy inside a document: a policy (`Statement`), `aws iam get-role` output or
 * `aws-setup --format json` output (`Role.AssumeRolePolicyDocument`), or a bare
 * `AssumeRolePolicyDocument`; a URL-encoded policy string is decoded.
 */
export function extractPolicy(doc: unknown): Obj {
  let d: unknown = doc;
  if (isObj(d) && !('Statement' in d)) {
    if (isObj(d.Role) && 'AssumeRolePolicyDocument' in d.Role) d = d.Role.AssumeRolePolicyDocument;
    else if ('AssumeRolePolicyDocument' in d) d = d.AssumeRolePolicyDocument;
  }
  if (typeof d === 'string') {
    let text = d;
    try {
      if (/%[0-9A-Fa-f]{2}/.test(text)) text = decodeURIComponent(text);
    } catch {
      unparsable('AssumeRolePolicyDocument is not valid URL encoding');
    }
    d = parsePolicyText(text);
  }
  if (!isObj(d)) unparsable('a policy must be a JSON object');
  if (!('Statement' in d))
    unparsable('no "Statement" (expected a trust policy, `aws iam get-role` output, or `aws-setup --format json` output)');
  return d;
}

/** Strict JSON: duplicate member names are refused (IAM and JSON.parse would silently keep one). */
export function parsePolicyText(text: string): unknown {
  try {
    return parseStrictJson(text.replace(/^\uFEFF/, ''), { maxDepth: 32 });
  } catch (e) {
    return unparsable(`not a JSON policy: ${(e as Error).message}`);
  }
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** IAM action names are case-insensitive; `*` and `?` are wildcards. */
function actionCovers(pattern: string, action: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.') +
      '$',
    'i',
  );
  return re.test(action);
}

interface Operator {
  set: 'ForAllValues' | 'ForAnyValue' | null;
  base: string;
  ifExists: boolean;
}

function parseOperator(name: string): Operator {
  const m = /^(?:(ForAllValues|ForAnyValue):)?(.*?)(IfExists)?$/.exec(name)!;
  return { set: (m[1] as Operator['set'] | undefined) ?? null, base: m[2]!, ifExists: m[3] !== undefined };
}

/** Split an OIDC condition key `<prefix>:<claim>` (the claim after the last colon). */
function splitKey(key: string): { prefix: string; claim: string } | null {
  const i = key.lastIndexOf(':');
  if (i <= 0) return null;
  return { prefix: key.slice(0, i), claim: key.slice(i + 1).toLowerCase() };
}

const stripScheme = (s: string): string => s.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
const hasScheme = (s: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s) || s.includes('://');

class Linter {
  readonly findings: Finding[] = [];

  add(rule: Finding['rule'], id: string, severity: Severity, statement: number | null, message: string): void {
    this.findings.push({ rule, id, severity, statement, message });
  }
}

/** Whether an Allow statement is about web identity federation (and so must follow the rules). */
function isFederationStatement(s: Obj): boolean {
  if ('NotPrincipal' in s || 'NotAction' in s) return true;
  const p = s.Principal;
  if (p === '*') return true;
  if (isObj(p)) {
    if ('Federated' in p) return true;
    if (asList(p.AWS).includes('*')) return true;
  }
  return asList(s.Action).some((a) => typeof a === 'string' && actionCovers(a, WEB_IDENTITY_ACTION));
}

/** The P of a statement's single Federated provider ARN, or null. */
function statementProvider(s: Obj): string | null {
  const p = s.Principal;
  if (!isObj(p)) return null;
  const federated = asList(p.Federated);
  if (federated.length !== 1 || typeof federated[0] !== 'string') return null;
  const m = PROVIDER_ARN_RE.exec(federated[0]);
  return m === null ? null : stripScheme(m[3]!);
}

function checkPrincipal(l: Linter, i: number, s: Obj): string | null {
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

function checkAction(l: Linter, i: number, s: Obj): void {
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

interface Pins {
  aud: boolean;
  sub: boolean;
}

function checkValues(l: Linter, i: number, claim: 'aud' | 'sub', op: Operator, key: string, raw: unknown, pins: Pins): void {
  const values = asList(raw).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  if (values.length === 0 || values.some((v) => v === '')) return; // an empty list pins nothing
  const like = op.base === 'StringLike';
  if (claim === 'sub') {
    const wild = values.filter(hasWildcard);
    for (const v of wild) {
      l.add(
        3,
        'sub_wildcard',
        'error',
        i,
        like
          ? `${op.base} ${JSON.stringify(key)}: ${JSON.stringify(v)} is a wildcard: it admits every identity it matches, and anyone can create a did:key or did:keri:B… identity that the bridge will issue tokens for; list each subject exactly under StringEquals`
          : `${op.base} ${JSON.stringify(key)}: ${JSON.stringify(v)} contains * or ?: StringEquals compares literally, so this never matches — and as a StringLike wildcard it would admit any identity; list each subject exactly`,
      );
    }
    for (const v of values)
      if (!hasWildcard(v) && !isBridgeSubject(v))
        l.add(
          2,
          'sub_not_did',
          'warning',
          i,
          `${JSON.stringify(key)}: ${JSON.stringify(v)} is not a did:keri or did:key; the bridge's sub is always the root DID of the chain, so this value never matches`,
        );
    if (wild.length === 0) pins.sub = true;
  } else {
    const wild = values.filter(hasWildcard);
    for (const v of wild)
      l.add(
        1,
        'aud_wildcard',
        'error',
        i,
        `${op.base} ${JSON.stringify(key)}: ${JSON.stringify(v)} is not an exact audience; pin the one audience the bridge issues for this account (usually sts.amazonaws.com)`,
      );
    if (values.length > 1)
      l.add(
        5,
        'aud_multiple',
        'warning',
        i,
        `${JSON.stringify(key)} accepts ${values.length} audiences: a token minted for any of them is accepted here`,
      );
    if (wild.length === 0) pins.aud = true;
  }
}

function checkConditions(l: Linter, i: number, s: Obj, path: string | null): void {
  const pins: Pins = { aud: false, sub: false };
  const cond = s.Condition;
  if (cond !== undefined && !isObj(cond)) unparsable(`Statement[${i}].Condition must be an object`);
  for (const [opName, block] of Object.entries(cond ?? {})) {
    if (!isObj(block)) unparsable(`Statement[${i}].Condition.${opName} must be an object of condition keys`);
    const op = parseOperator(opName);
    for (const [key, value] of Object.entries(block)) {
      const parts = splitKey(key);
      if (parts === null || (parts.claim !== 'aud' && parts.claim !== 'sub')) {
        if (hasScheme(key))
          l.add(
            4,
            'condition_key_scheme',
            'error',
            i,
            `condition key ${JSON.stringify(key)} contains a scheme: IAM keys are P:claim without https://, so this condition never matches what you meant`,
          );
        continue;
      }
      const claim = parts.claim;
      if (hasScheme(parts.prefix)) {
        l.add(
          4,
          'condition_key_scheme',
          'error',
          i,
          `condition key ${JSON.stringify(key)} contains a scheme: IAM's key is ${JSON.stringify(`${stripScheme(parts.prefix)}:${claim}`)} (the issuer without https://); this condition tests a key that never exists`,
        );
        continue;
      }
      if (path !== null && parts.prefix.toLowerCase() !== path.toLowerCase()) {
        // Another provider's key (e.g. token.actions.githubusercontent.com:sub) is never set for this provider's tokens.
        l.add(
          4,
          'condition_key_prefix',
          'error',
          i,
          `condition key ${JSON.stringify(key)} is for provider ${JSON.stringify(parts.prefix)}, but the statement trusts ${JSON.stringify(path)}: IAM sets only ${JSON.stringify(`${path}:${claim}`)} for these tokens`,
        );
        continue;
      }
      if (op.set !== null) {
        l.add(
          5,
          'set_operator',
          'error',
          i,
          `${opName} on ${JSON.stringify(key)}: ${op.set}: is for multivalued keys; ${op.set === 'ForAllValues' ? 'it is true when the key is missing or empty' : 'it matches if any one value does'} — use plain StringEquals`,
        );
        continue;
      }
      if (op.ifExists) {
        l.add(
          5,
          'if_exists',
          'error',
          i,
          `${opName} on ${JSON.stringify(key)}: …IfExists is true when the key is absent — use plain StringEquals`,
        );
        continue;
      }
      if (op.base.startsWith('StringNot')) {
        l.add(
          5,
          'negated_operator',
          'error',
          i,
          `${opName} on ${JSON.stringify(key)}: a negated match admits every value except those listed — use StringEquals with the values to admit`,
        );
        continue;
      }
      if (op.base.endsWith('IgnoreCase')) {
        l.add(
          5,
          'ignore_case',
          'error',
          i,
          `${opName} on ${JSON.stringify(key)}: DIDs and audiences are case-sensitive (did:keri:EAbc… and did:keri:Eabc… are different identities) — use StringEquals`,
        );
        continue;
      }
      if (op.base !== 'StringEquals' && op.base !== 'StringLike') {
        l.add(5, 'unexpected_operator', 'error', i, `${opName} on ${JSON.stringify(key)}: ${claim} must be matched with StringEquals`);
        continue;
      }
      checkValues(l, i, claim, op, key, value, pins);
    }
  }
  const where = path === null ? 'P' : path;
  if (!pins.aud)
    l.add(
      1,
      'aud_not_pinned',
      'error',
      i,
      `no exact match on "${where}:aud" (StringEquals): a token this bridge issued for any other audience would be accepted`,
    );
  if (!pins.sub)
    l.add(
      2,
      'sub_not_pinned',
      'error',
      i,
      `no exact match on "${where}:sub" (StringEquals with the trusted root DIDs): anyone who can get a token from this bridge — including for a did:key they just made — could assume the role`,
    );
}

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

/** Exit status of `lint-policy`: 0 clean (warnings allowed), 1 errors, 2 unparsable. */
export const lintExitCode = (r: LintResult): 0 | 1 => (r.errors > 0 ? 1 : 0);

export function formatFinding(f: Finding): string {
  const where = f.statement === null ? '' : ` Statement[${f.statement}]`;
  return `${f.severity} rule ${f.rule} [${f.id}]${where}: ${f.message}`;
}

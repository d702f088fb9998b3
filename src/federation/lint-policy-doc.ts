/**
 * The trust-policy document model for `lint-policy`: parsing (strict JSON, the accepted wrappers)
 * and the IAM reading of a statement shared by the rules. Not a policy at all: `policy_unparsable`.
 */
import { parseStrictJson } from '../encoding/json.ts';
import { PROVIDER_ARN_RE, WEB_IDENTITY_ACTION } from './aws.ts';
import { FederationError } from './errors.ts';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function unparsable(message: string): never {
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

export const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

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

export const stripScheme = (s: string): string => s.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
export const hasScheme = (s: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s) || s.includes('://');

/** Whether an Allow statement is about web identity federation (and so must follow the rules). */
export function isFederationStatement(s: Obj): boolean {
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
export function statementProvider(s: Obj): string | null {
  const p = s.Principal;
  if (!isObj(p)) return null;
  const federated = asList(p.Federated);
  if (federated.length !== 1 || typeof federated[0] !== 'string') return null;
  const m = PROVIDER_ARN_RE.exec(federated[0]);
  return m === null ? null : stripScheme(m[3]!);
}

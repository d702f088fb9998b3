/**
 * The `lint-policy` rules on a federation statement's Condition: aud and sub pinned exactly with
 * plain StringEquals on this provider's keys (rules 1–5 as they apply to condition keys and values).
 */
import { hasWildcard, isBridgeSubject } from './aws.ts';
import { asList, hasScheme, isObj, stripScheme, unparsable } from './lint-policy-doc.ts';
import type { Obj } from './lint-policy-doc.ts';
import type { Linter } from './lint-report.ts';

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

export function checkConditions(l: Linter, i: number, s: Obj, path: string | null): void {
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

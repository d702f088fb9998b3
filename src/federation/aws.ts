/**
 * AWS names for a bridge issuer (SPEC §8), as pure functions.
 *
 * Let P = the issuer without `https://` (host and path). IAM's condition keys are `P:aud` and
 * `P:sub`; the provider ARN is `arn:<partition>:iam::<account>:oidc-provider/P`. The issuer itself is
 * validated by the bridge's own rules (`src/bridge/issuer.ts`): https, no port, no query, fragment or
 * trailing slash, canonical form.
 */
import { validateIssuer } from '../bridge/issuer.ts';
import { BridgeConfigError } from '../bridge/errors.ts';
import { FederationError } from './errors.ts';

export const AWS_STS_AUDIENCE = 'sts.amazonaws.com';
export const WEB_IDENTITY_ACTION = 'sts:AssumeRoleWithWebIdentity';
export const TAG_SESSION_ACTION = 'sts:TagSession';
export const POLICY_VERSION = '2012-10-17';
/** CreateOpenIDConnectProvider takes at most five thumbprints. */
export const MAX_THUMBPRINTS = 5;
/** AWS accepts a web identity token until `exp` + 300 s (clock-skew allowance). */
export const AWS_EXP_LEEWAY_SECONDS = 300;

export const ACCOUNT_ID_RE = /^[0-9]{12}$/;
export const PARTITION_RE = /^aws(-[a-z0-9]+)*$/;
/** IAM role names: `[\w+=,.@-]{1,64}`. */
export const ROLE_NAME_RE = /^[A-Za-z0-9_+=,.@-]{1,64}$/;
/** STS RoleSessionName: `[\w+=,.@-]{2,64}`. */
export const SESSION_NAME_RE = /^[A-Za-z0-9_+=,.@-]{2,64}$/;
/** A role ARN as AssumeRoleWithWebIdentity takes it (paths allowed). */
export const ROLE_ARN_RE = /^arn:aws(-[a-z0-9]+)*:iam::[0-9]{12}:role\/[A-Za-z0-9_+=,.@/-]{1,512}$/;
/** `arn:<partition>:iam::<account>:oidc-provider/<P>` */
export const PROVIDER_ARN_RE = /^arn:(aws(?:-[a-z0-9]+)*):iam::([0-9]{12}):oidc-provider\/(.+)$/;

/** The subjects the bridge issues: `did:keri:<CESR prefix>` and Ed25519 `did:key:z…` (base58btc). */
export const DID_KERI_RE = /^did:keri:[A-Za-z0-9_-]{1,256}$/;
export const DID_KEY_RE = /^did:key:z[1-9A-HJ-NP-Za-km-z]{1,128}$/;
/** The same, with IAM StringLike wildcards allowed in the identifier part. */
const DID_WILDCARD_RE = /^did:(keri|key):[A-Za-z0-9_*?-]{0,256}$/;

export const isBridgeSubject = (s: string): boolean => DID_KERI_RE.test(s) || DID_KEY_RE.test(s);
export const hasWildcard = (s: string): boolean => s.includes('*') || s.includes('?');

/** P: the issuer without `https://` — host and path, exactly as IAM names the provider. */
export function providerPath(issuer: string): string {
  try {
    validateIssuer(issuer, false);
  } catch (e) {
    if (e instanceof BridgeConfigError) throw new FederationError('invalid_option', e.message);
    throw e;
  }
  return issuer.slice('https://'.length);
}

export function providerArn(partition: string, accountId: string, path: string): string {
  return `arn:${partition}:iam::${accountId}:oidc-provider/${path}`;
}

export function checkAccountId(id: string): string {
  if (!ACCOUNT_ID_RE.test(id)) throw new FederationError('invalid_option', `--account-id must be 12 digits, got ${JSON.stringify(id)}`);
  return id;
}

export function checkPartition(p: string): string {
  if (!PARTITION_RE.test(p))
    throw new FederationError('invalid_option', `--partition must be aws, aws-cn, aws-us-gov, …, got ${JSON.stringify(p)}`);
  return p;
}

export function checkRoleName(name: string): string {
  if (!ROLE_NAME_RE.test(name))
    throw new FederationError('invalid_option', `--role-name must match [\\w+=,.@-]{1,64}, got ${JSON.stringify(name)}`);
  return name;
}

export function checkRoleArn(arn: string): string {
  if (!ROLE_ARN_RE.test(arn))
    throw new FederationError(
      'invalid_option',
      `--role-arn must be arn:<partition>:iam::<12-digit account>:role/<name>, got ${JSON.stringify(arn)}`,
    );
  return arn;
}

/** A client ID (audience) as IAM takes it: 1–255 printable characters. */
export function checkAudience(aud: string): string {
  if (!/^[\x21-\x7e]{1,255}$/.test(aud))
    throw new FederationError(
      'invalid_option',
      `--audience must be 1–255 printable ASCII characters without spaces, got ${JSON.stringify(aud)}`,
    );
  return aud;
}

/**
 * A trust-policy subject: exactly a did:keri or did:key, or — only when `allowWildcard` — a pattern
 * with `*`/`?` (which then needs StringLike and breaks rule 3).
 */
export function checkSubject(subject: string, allowWildcard: boolean): string {
  if (hasWildcard(subject)) {
    if (!allowWildcard) {
      throw new FederationError(
        'wildcard_subject',
        `--subject ${JSON.stringify(subject)} contains a wildcard: the role would trust every identity it matches, and anyone can make a did:key or did:keri:B… identity of their own (rule 3). Name each subject exactly; --allow-wildcard-subject overrides this`,
      );
    }
    if (!DID_WILDCARD_RE.test(subject))
      throw new FederationError('invalid_subject', `--subject ${JSON.stringify(subject)} is not a did:keri:… or did:key:… pattern`);
    return subject;
  }
  if (!isBridgeSubject(subject)) {
    throw new FederationError(
      'invalid_subject',
      `--subject ${JSON.stringify(subject)} is not a DID the bridge issues: did:keri:<prefix> or did:key:z… (the root DID of the attestation chain, chain[0].issuer)`,
    );
  }
  return subject;
}

/**
 * The default RoleSessionName: `tb-` + the subject without `did:`, characters outside `[\w+=,.@-]`
 * replaced by `-`, cut to 64 characters (`did:keri:EAbc…` → `tb-keri-EAbc…`). It shows up in
 * CloudTrail and in the assumed-role ARN.
 */
export function sessionNameFor(subject: string): string {
  const body = subject.replace(/^did:/, '').replace(/[^A-Za-z0-9_+=,.@-]/g, '-');
  return `tb-${body}`.slice(0, 64);
}

export function checkSessionName(name: string): string {
  if (!SESSION_NAME_RE.test(name))
    throw new FederationError('invalid_session_name', `--session-name must match [\\w+=,.@-]{2,64}, got ${JSON.stringify(name)}`);
  return name;
}

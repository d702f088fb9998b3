/**
 * What STS's answers to AssumeRoleWithWebIdentity usually mean for a bridge token, and what to do
 * (docs/federation-aws.md has the same table). Pure: (error name, message) → advice.
 */

export interface StsAdvice {
  cause: string;
  fix: string;
}

interface Entry {
  name: RegExp;
  message: RegExp;
  advice: StsAdvice;
}

const TABLE: readonly Entry[] = [
  {
    name: /InvalidIdentityToken/,
    message: /audience/i,
    advice: {
      cause: "the token's aud is not in the provider's client ID list (or the token carries azp, which AWS then takes as the audience)",
      fix: 'run `token-bridge check-token` on the token; compare aud with `aws iam get-open-id-connect-provider` ClientIDList, and request the token with --audience sts.amazonaws.com (the bridge must allow it)',
    },
  },
  {
    name: /InvalidIdentityToken/,
    message: /No OpenIDConnect provider found/i,
    advice: {
      cause:
        "no IAM OIDC provider in this account has exactly the token's iss as its URL (another account or partition, http vs https, a path or trailing slash that differs)",
      fix: 'compare `check-token` iss with `aws iam list-open-id-connect-providers`; re-run aws-setup with --issuer set to the bridge issuer byte for byte',
    },
  },
  {
    name: /InvalidIdentityToken/,
    message: /thumbprint/i,
    advice: {
      cause:
        "the last certificate of the chain the bridge host presents no longer matches the provider's thumbprint list (self-signed or private-CA certificate was renewed)",
      fix: 'recompute with `token-bridge aws-setup --connect` and add it with `aws iam update-open-id-connect-provider-thumbprint` (up to 5 thumbprints, so add the next one before rotating)',
    },
  },
  {
    name: /InvalidIdentityToken|IDPCommunicationError/,
    message: /verification key|retrieve|communicat/i,
    advice: {
      cause: "AWS could not fetch the bridge's discovery document or JWKS over HTTPS, or the JWKS has no key with the token's kid",
      fix: 'the issuer host must be reachable from the internet on port 443 with a complete certificate chain; check `curl <issuer>/.well-known/openid-configuration` and jwks.json, and rotate keys with pre-publication (keys rotate --prepublish) so AWS sees a new kid before it signs',
    },
  },
  {
    name: /InvalidIdentityToken/,
    message: /not a valid JWT|malformed|parse/i,
    advice: {
      cause: 'the token is not a compact JWT (truncated, quoted, or the whole /token JSON response was passed)',
      fix: 'pass only access_token; run `token-bridge check-token` on it',
    },
  },
  {
    name: /ExpiredToken/,
    message: /./,
    advice: {
      cause: 'the token expired: AWS accepts a token until exp + 300 s',
      fix: 'get a fresh token right before the STS call (tokens live 900 s by default); check the clocks of the bridge and of the CI runner',
    },
  },
  {
    name: /IDPRejectedClaim/,
    message: /./,
    advice: { cause: 'the identity provider rejected a claim', fix: 'run `token-bridge check-token` on the token' },
  },
  {
    name: /AccessDenied/,
    message: /./,
    advice: {
      cause:
        "the token is valid but the role's trust policy does not admit it: sub not listed exactly, P:aud differs, the Federated ARN names another provider or account, or condition keys carry https://",
      fix: 'run `aws iam get-role --role-name R | token-bridge lint-policy - --issuer <issuer>` and compare P:sub with the sub printed by `token-bridge check-token`',
    },
  },
  {
    name: /ValidationError/,
    message: /./,
    advice: {
      cause:
        "a request parameter is invalid (RoleSessionName must match [\\w+=,.@-]{2,64}; DurationSeconds must not exceed the role's MaxSessionDuration; the role ARN must be well formed)",
      fix: 'check --role-arn, --session-name and --duration-seconds',
    },
  },
];

const GENERIC_INVALID: StsAdvice = {
  cause: 'STS refused the token',
  fix: 'run `token-bridge check-token` on the token (aud, azp, iss, sub, lifetime)',
};

/** Advice for an STS error, or null when the error is not one this table knows. */
export function adviseStsError(name: string, message: string): StsAdvice | null {
  for (const e of TABLE) if (e.name.test(name) && e.message.test(message)) return e.advice;
  return /InvalidIdentityToken/.test(name) ? GENERIC_INVALID : null;
}

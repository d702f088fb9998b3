/** OIDC discovery (SPEC §7): what a relying party such as AWS IAM reads before fetching the JWKS. */
import { AWS_TAGS_CLAIM } from './decide.ts';
import type { SigningAlg } from './signing.ts';

export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';
export const TOKEN_PATH = '/token';
/** JWKS and discovery responses may be cached this long (SPEC: JWKS `Cache-Control: public, max-age=300`). */
export const OIDC_CACHE_CONTROL = 'public, max-age=300';

export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  token_endpoint: string;
  response_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: SigningAlg[];
  claims_supported: string[];
}

export function discoveryDocument(issuer: string, algs: readonly SigningAlg[], awsSessionTags: boolean): DiscoveryDocument {
  const claims = ['iss', 'sub', 'aud', 'iat', 'nbf', 'exp', 'jti', 'capabilities', 'keri_prefix', 'pop'];
  if (awsSessionTags) claims.push(AWS_TAGS_CLAIM);
  return {
    issuer,
    jwks_uri: issuer + JWKS_PATH,
    token_endpoint: issuer + TOKEN_PATH,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs.length === 0 ? ['RS256'] : [...algs],
    claims_supported: claims,
  };
}

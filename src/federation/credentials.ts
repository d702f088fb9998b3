/**
 * `token-bridge credentials` (SPEC §8), for CI: get a token from the bridge with proof of possession
 * (`buildTokenRequest`, the same request `token-bridge token` sends), check it locally
 * (check-token), exchange it with STS `AssumeRoleWithWebIdentity`, and render the three credential
 * variables as shell exports or as GitHub Actions `::add-mask::` lines plus `$GITHUB_ENV` entries.
 *
 * STS is called with the AWS SDK (`@aws-sdk/client-sts`): the Query API request is a form-encoded
 * POST (Action=AssumeRoleWithWebIdentity, Version=2011-06-15, RoleArn, RoleSessionName,
 * WebIdentityToken[, DurationSeconds]) that needs no AWS credentials; the endpoint is overridable
 * (`--sts-endpoint`, or the SDK's own AWS_ENDPOINT_URL_STS).
 */
import type { KeyObject } from 'node:crypto';
import { Agent } from 'node:https';
import { AssumeRoleWithWebIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { buildTokenRequest } from '../bridge/client.ts';
import { fetchCause } from '../client/http.ts';
import { DISCOVERY_PATH, TOKEN_PATH } from '../bridge/oidc.ts';
import { checkSessionName, sessionNameFor } from './aws.ts';
import { checkToken } from './check-token.ts';
import type { TokenFinding } from './check-token.ts';
import { FederationError } from './errors.ts';
import { adviseStsError } from './troubleshoot.ts';

export type FetchLike = (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<Response>;

export interface BridgeTokenInput {
  /** Where the bridge is reachable (POST <bridge>/token). */
  bridge: string;
  /** SPEC §7.2: the `finalized_anchor` member (`--finalized-anchor` with `--chain-state`). */
  finalizedAnchor?: unknown;
  chain: readonly unknown[];
  rootPublicKey: string;
  deviceKey: KeyObject;
  audience: string;
  /** The bridge's issuer (default: read from its discovery document). */
  issuer?: string;
  ttlSecs?: number;
  capabilities?: readonly string[];
  fetch?: FetchLike;
}

export interface BridgeToken {
  token: string;
  subject: string;
  issuer: string;
  expiresIn: number;
}

function describeProblem(status: number, text: string): string {
  try {
    const p = JSON.parse(text) as { code?: unknown; detail?: unknown };
    if (typeof p.code === 'string') return `${status} ${p.code}${typeof p.detail === 'string' ? `: ${p.detail}` : ''}`;
  } catch {
    // not problem+json
  }
  return `${status}: ${text.slice(0, 500)}`;
}

/**
 * A JSON answer, or an error that names the URL and what came instead: a server that is not a
 * token bridge (a web page, a proxy's error page) otherwise surfaces as JSON.parse's
 * `Unexpected token '<'`, which names neither.
 */
function jsonAnswer(url: string, res: Response, text: string, expected: string): { [k: string]: unknown } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) return doc as { [k: string]: unknown };
  const type = res.headers.get('content-type') ?? 'no content-type';
  const start = JSON.stringify(text.slice(0, 40).replace(/\s+/g, ' '));
  throw new FederationError(
    'token_request_failed',
    `${url}: HTTP ${res.status} is not ${expected} (${type}, starting ${start}): is this URL a token bridge?`,
  );
}

export async function discoverIssuer(bridge: string, f: FetchLike): Promise<string> {
  const url = bridge + DISCOVERY_PATH;
  let res: Response;
  try {
    res = await f(url);
  } catch (e) {
    throw new FederationError('token_request_failed', `${url}: ${(e as Error).message}${fetchCause(e, url)}`);
  }
  if (!res.ok) throw new FederationError('token_request_failed', `${url}: HTTP ${res.status}`);
  const doc = jsonAnswer(url, res, await res.text(), 'an OpenID discovery document') as { issuer?: unknown };
  if (typeof doc.issuer !== 'string') throw new FederationError('token_request_failed', `${url}: no issuer in the discovery document`);
  return doc.issuer;
}

/** POST /token with a proof of possession by the leaf device key. */
export async function requestBridgeToken(input: BridgeTokenInput): Promise<BridgeToken> {
  const f: FetchLike = input.fetch ?? fetch;
  const bridge = input.bridge.replace(/\/+$/, '');
  const issuer = input.issuer ?? (await discoverIssuer(bridge, f));
  const body = buildTokenRequest({
    chain: input.chain,
    rootPublicKey: input.rootPublicKey,
    audience: input.audience,
    issuer,
    deviceKey: input.deviceKey,
    ...(input.ttlSecs === undefined ? {} : { ttlSecs: input.ttlSecs }),
    ...(input.capabilities === undefined ? {} : { requestedCapabilities: input.capabilities }),
    ...(input.finalizedAnchor === undefined ? {} : { finalizedAnchor: input.finalizedAnchor }),
  });
  let res: Response;
  try {
    res = await f(bridge + TOKEN_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (e) {
    throw new FederationError('token_request_failed', `${bridge}${TOKEN_PATH}: ${(e as Error).message}${fetchCause(e, bridge)}`);
  }
  const text = await res.text();
  if (!res.ok) throw new FederationError('token_request_failed', `${bridge}${TOKEN_PATH} answered ${describeProblem(res.status, text)}`);
  const doc = jsonAnswer(`${bridge}${TOKEN_PATH}`, res, text, 'a token response') as {
    access_token?: unknown;
    subject?: unknown;
    expires_in?: unknown;
  };
  if (typeof doc.access_token !== 'string' || typeof doc.subject !== 'string')
    throw new FederationError('token_request_failed', `${bridge}${TOKEN_PATH}: the response has no access_token/subject`);
  return { token: doc.access_token, subject: doc.subject, issuer, expiresIn: typeof doc.expires_in === 'number' ? doc.expires_in : 0 };
}

/** Check a fresh token before STS sees it; returns the warnings, throws on errors. */
export function precheckToken(token: BridgeToken, audience: string, now: number): TokenFinding[] {
  const r = checkToken(token.token, { issuer: token.issuer, audience, now });
  const errors = r.findings.filter((f) => f.severity === 'error');
  if (errors.length > 0) {
    throw new FederationError(
      'token_rejected',
      `the bridge's token would be refused by STS: ${errors.map((f) => `[${f.id}] ${f.message}`).join('; ')}`,
    );
  }
  if (r.claims.sub !== token.subject)
    throw new FederationError(
      'token_rejected',
      `the token's sub ${JSON.stringify(r.claims.sub)} differs from the response's subject ${JSON.stringify(token.subject)}`,
    );
  return r.findings;
}

export interface AssumeRoleInput {
  roleArn: string;
  sessionName: string;
  token: string;
  region: string;
  /** e.g. https://sts.eu-west-1.amazonaws.com, or a stand-in */
  endpoint?: string;
  durationSeconds?: number;
  /** Extra CA certificates (PEM) to trust for the STS endpoint (tests; private endpoints). */
  ca?: string | Buffer;
  maxAttempts?: number;
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date | null;
  assumedRoleArn: string | null;
  subjectFromToken: string | null;
}

/** AssumeRoleWithWebIdentity with the AWS SDK; STS errors become FederationError `sts_failed` with advice. */
export async function assumeRoleWithWebIdentity(input: AssumeRoleInput): Promise<AwsCredentials> {
  const client = new STSClient({
    region: input.region,
    maxAttempts: input.maxAttempts ?? 3,
    ...(input.endpoint === undefined ? {} : { endpoint: input.endpoint }),
    ...(input.ca === undefined ? {} : { requestHandler: { httpsAgent: new Agent({ ca: input.ca }) } }),
  });
  try {
    const out = await client.send(
      new AssumeRoleWithWebIdentityCommand({
        RoleArn: input.roleArn,
        RoleSessionName: checkSessionName(input.sessionName),
        WebIdentityToken: input.token,
        ...(input.durationSeconds === undefined ? {} : { DurationSeconds: input.durationSeconds }),
      }),
    );
    const c = out.Credentials;
    if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined) {
      throw new FederationError('sts_failed', 'STS answered without Credentials');
    }
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expiration: c.Expiration ?? null,
      assumedRoleArn: out.AssumedRoleUser?.Arn ?? null,
      subjectFromToken: out.SubjectFromWebIdentityToken ?? null,
    };
  } catch (e) {
    if (e instanceof FederationError) throw e;
    const err = e as Error;
    const advice = adviseStsError(err.name, err.message);
    const text = `STS AssumeRoleWithWebIdentity failed: ${err.name}: ${err.message}${advice === null ? '' : `\n  cause: ${advice.cause}\n  fix: ${advice.fix}`}`;
    throw new FederationError('sts_failed', text);
  } finally {
    client.destroy();
  }
}

export const defaultSessionName = sessionNameFor;

/** Credential values go into shell code and into $GITHUB_ENV: printable ASCII, one line, bounded. */
function safeValue(name: string, v: string): string {
  if (!/^[\x21-\x7e]{1,8192}$/.test(v))
    throw new FederationError('unsafe_credential', `STS returned a ${name} that is not one line of printable ASCII; refusing to print it`);
  return v;
}

function entries(c: AwsCredentials): [string, string][] {
  return [
    ['AWS_ACCESS_KEY_ID', safeValue('AccessKeyId', c.accessKeyId)],
    ['AWS_SECRET_ACCESS_KEY', safeValue('SecretAccessKey', c.secretAccessKey)],
    ['AWS_SESSION_TOKEN', safeValue('SessionToken', c.sessionToken)],
  ];
}

const singleQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** `--format env`: three `export NAME='value'` lines for `eval "$(token-bridge credentials …)"`. */
export function renderEnv(c: AwsCredentials): string {
  return entries(c)
    .map(([k, v]) => `export ${k}=${singleQuote(v)}\n`)
    .join('');
}

/**
 * `--format github`: `::add-mask::` lines (stdout, before anything else could print a value) and
 * the `NAME=value` lines to append to the file named by `$GITHUB_ENV`, so later steps of the job
 * see the variables and the log shows `***`.
 */
export function renderGithub(c: AwsCredentials): { stdout: string; githubEnv: string } {
  const e = entries(c);
  return { stdout: e.map(([, v]) => `::add-mask::${v}\n`).join(''), githubEnv: e.map(([k, v]) => `${k}=${v}\n`).join('') };
}

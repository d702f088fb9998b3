/**
 * `token-bridge aws-setup` (SPEC §8), pure: from the issuer, the subjects, the audience and the
 * thumbprints, everything an AWS account needs — the IAM OIDC provider and a role whose trust policy
 * follows the five rules (docs/federation-aws.md) — rendered as JSON, AWS CLI commands, Terraform or
 * CloudFormation.
 *
 * The trust policy: version `2012-10-17`, one Allow statement, `Principal.Federated` = the provider
 * ARN, `Action` = `sts:AssumeRoleWithWebIdentity`, and `StringEquals` on `P:aud` (the audience) and
 * `P:sub` (the subjects, exact). A wildcard subject is refused unless explicitly forced
 * (`allowWildcardSubject`); it then goes under `StringLike`, and lint-policy still reports it.
 */
import { stringify as stringifyYaml } from 'yaml';
import {
  AWS_STS_AUDIENCE,
  POLICY_VERSION,
  WEB_IDENTITY_ACTION,
  checkAccountId,
  checkAudience,
  checkPartition,
  checkRoleName,
  checkSubject,
  hasWildcard,
  providerArn,
  providerPath,
} from './aws.ts';
import { FederationError } from './errors.ts';
import { THUMBPRINT_WARNING, thumbprintList } from './thumbprint.ts';

export const SETUP_FORMATS = ['json', 'cli', 'terraform', 'cloudformation'] as const;
export type SetupFormat = (typeof SETUP_FORMATS)[number];
export const DEFAULT_ROLE_NAME = 'token-bridge';
/** IAM's default limit for a role trust policy, counted without whitespace. */
export const TRUST_POLICY_DEFAULT_LIMIT = 2048;

export interface SetupInput {
  issuer: string;
  subjects: readonly string[];
  audience?: string;
  accountId?: string;
  roleName?: string;
  partition?: string;
  /** Thumbprints from --tls-cert / --connect (already computed). */
  thumbprints: readonly string[];
  extraThumbprints?: readonly string[];
  allowWildcardSubject?: boolean;
}

export interface SetupPlan {
  issuer: string;
  /** P: the issuer without https:// */
  path: string;
  audience: string;
  subjects: string[];
  thumbprints: string[];
  roleName: string;
  partition: string;
  accountId: string | null;
  wildcard: boolean;
  warnings: string[];
}

export type PolicyDocument = Record<string, unknown>;

export function planSetup(input: SetupInput): SetupPlan {
  const path = providerPath(input.issuer);
  const audience = checkAudience(input.audience ?? AWS_STS_AUDIENCE);
  if (input.subjects.length === 0)
    throw new FederationError(
      'invalid_subject',
      '--subject is required: the root DID(s) the role trusts (chain[0].issuer of the attestation chain)',
    );
  const subjects = [...new Set(input.subjects.map((s) => checkSubject(s, input.allowWildcardSubject === true)))];
  const wildcard = subjects.some(hasWildcard);
  const thumbprints = thumbprintList(input.thumbprints, input.extraThumbprints ?? []);
  const partition = checkPartition(input.partition ?? 'aws');
  const roleName = checkRoleName(input.roleName ?? DEFAULT_ROLE_NAME);
  const accountId = input.accountId === undefined ? null : checkAccountId(input.accountId);
  const warnings = [THUMBPRINT_WARNING];
  if (wildcard) {
    warnings.push(
      'a wildcard subject was forced (--allow-wildcard-subject): the role trusts every identity the pattern matches, including identities anyone can create (rule 3); lint-policy reports this policy as an error',
    );
  }
  if (audience !== AWS_STS_AUDIENCE)
    warnings.push(
      `the audience ${JSON.stringify(audience)} is not ${AWS_STS_AUDIENCE}: the bridge must allow it (--audience) and tokens must ask for it`,
    );
  const keri = subjects.filter((s) => /^did:keri:[DE]/.test(s));
  if (keri.length > 0)
    warnings.push(
      `${keri.join(', ')}: transferable did:keri roots get tokens only when the bridge's --trusted-roots file lists them with their keys`,
    );
  const plan: SetupPlan = {
    issuer: input.issuer,
    path,
    audience,
    subjects,
    thumbprints,
    roleName,
    partition,
    accountId,
    wildcard,
    warnings,
  };
  const size = JSON.stringify(trustPolicy(plan, providerArn(partition, accountId ?? '000000000000', path))).replace(/\s/g, '').length;
  if (size > TRUST_POLICY_DEFAULT_LIMIT)
    warnings.push(
      `the trust policy has ${size} characters (without whitespace); IAM's default limit is ${TRUST_POLICY_DEFAULT_LIMIT} (a quota increase allows up to 4096): use fewer subjects per role`,
    );
  return plan;
}

/** The role trust policy, with `federated` as the Principal (an ARN, or a template reference). */
export function trustPolicy(plan: SetupPlan, federated: unknown): PolicyDocument {
  const sub = plan.subjects.length === 1 ? plan.subjects[0]! : plan.subjects;
  const condition: Record<string, Record<string, unknown>> = plan.wildcard
    ? { StringEquals: { [`${plan.path}:aud`]: plan.audience }, StringLike: { [`${plan.path}:sub`]: sub } }
    : { StringEquals: { [`${plan.path}:aud`]: plan.audience, [`${plan.path}:sub`]: sub } };
  return {
    Version: POLICY_VERSION,
    Statement: [{ Effect: 'Allow', Principal: { Federated: federated }, Action: WEB_IDENTITY_ACTION, Condition: condition }],
  };
}

function needAccount(plan: SetupPlan, format: string): string {
  if (plan.accountId === null)
    throw new FederationError('invalid_option', `--format ${format} needs --account-id (the provider ARN names the account)`);
  return plan.accountId;
}

/**
 * JSON in the shapes of the IAM API: `OpenIDConnectProvider` is CreateOpenIDConnectProvider's input
 * (`aws iam create-open-id-connect-provider --cli-input-json`), `Role` holds `RoleName` and
 * `AssumeRolePolicyDocument` as `aws iam get-role` prints them (so lint-policy reads this output as is).
 */
export function renderJson(plan: SetupPlan): string {
  const arn = providerArn(plan.partition, needAccount(plan, 'json'), plan.path);
  const doc = {
    Issuer: plan.issuer,
    ProviderArn: arn,
    OpenIDConnectProvider: { Url: plan.issuer, ClientIDList: [plan.audience], ThumbprintList: plan.thumbprints },
    Role: { RoleName: plan.roleName, AssumeRolePolicyDocument: trustPolicy(plan, arn) },
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

/** POSIX shell single-quoting. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const comment = (prefix: string, lines: readonly string[]): string => lines.map((l) => `${prefix} ${l}`).join('\n');

function header(plan: SetupPlan, prefix: string): string {
  return comment(prefix, [
    `token-bridge aws-setup: IAM OIDC provider and role for ${plan.issuer}`,
    `Trusted subjects (P:sub): ${plan.subjects.join(', ')}`,
    ...plan.warnings.map((w) => `WARNING: ${w}`),
  ]);
}

/** A POSIX shell script of AWS CLI commands (the account defaults to the caller's). */
export function renderCli(plan: SetupPlan): string {
  const account = plan.accountId === null ? '"$(aws sts get-caller-identity --query Account --output text)"' : shellQuote(plan.accountId);
  // The heredoc is unquoted so ${PARTITION} and ${ACCOUNT_ID} expand; every other character in it is
  // validated (DIDs, host/path, audience without spaces) and `\`, `$` and backquotes are escaped.
  const policy = JSON.stringify(trustPolicy(plan, '__FEDERATED__'), null, 2)
    .replace(/[\\$`]/g, (c) => `\\${c}`)
    .replace('__FEDERATED__', `arn:\${PARTITION}:iam::\${ACCOUNT_ID}:oidc-provider/${plan.path}`);
  return [
    '#!/bin/sh',
    header(plan, '#'),
    'set -eu',
    `PARTITION=${shellQuote(plan.partition)}`,
    `ACCOUNT_ID=${account}`,
    '',
    '# 1. The OIDC provider: the issuer URL, the audience as client ID, the thumbprint(s).',
    'aws iam create-open-id-connect-provider \\',
    `  --url ${shellQuote(plan.issuer)} \\`,
    `  --client-id-list ${shellQuote(plan.audience)} \\`,
    `  --thumbprint-list ${plan.thumbprints.map(shellQuote).join(' ')}`,
    '',
    '# 2. The role and its trust policy (exact aud and sub).',
    'POLICY_FILE="$(mktemp)"',
    `trap 'rm -f "$POLICY_FILE"' EXIT`,
    `cat > "$POLICY_FILE" <<EOF`,
    policy,
    'EOF',
    'aws iam create-role \\',
    `  --role-name ${shellQuote(plan.roleName)} \\`,
    '  --assume-role-policy-document "file://$POLICY_FILE" \\',
    '  --query Role.Arn --output text',
    '',
  ].join('\n');
}

/** An HCL string literal (escapes `\`, `"`, and the `${`/`%{` template sequences). */
export function hclString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\$\{/g, '$${').replace(/%\{/g, '%%{')}"`;
}

const hclList = (items: readonly string[]): string => `[${items.map(hclString).join(', ')}]`;

/** Terraform (hashicorp/aws): the provider, the role (policy via jsonencode), and the role ARN output. */
export function renderTerraform(plan: SetupPlan): string {
  const subValue = plan.subjects.length === 1 ? hclString(plan.subjects[0]!) : hclList(plan.subjects);
  const audKey = hclString(`${plan.path}:aud`);
  const subKey = hclString(`${plan.path}:sub`);
  const condition = plan.wildcard
    ? [
        '        StringEquals = {',
        `          ${audKey} = ${hclString(plan.audience)}`,
        '        }',
        '        StringLike = {',
        `          ${subKey} = ${subValue}`,
        '        }',
      ]
    : ['        StringEquals = {', `          ${audKey} = ${hclString(plan.audience)}`, `          ${subKey} = ${subValue}`, '        }'];
  return [
    header(plan, '#'),
    '',
    'resource "aws_iam_openid_connect_provider" "token_bridge" {',
    `  url             = ${hclString(plan.issuer)}`,
    `  client_id_list  = ${hclList([plan.audience])}`,
    `  thumbprint_list = ${hclList(plan.thumbprints)}`,
    '}',
    '',
    'resource "aws_iam_role" "token_bridge" {',
    `  name = ${hclString(plan.roleName)}`,
    '  assume_role_policy = jsonencode({',
    `    Version = ${hclString(POLICY_VERSION)}`,
    '    Statement = [{',
    '      Effect    = "Allow"',
    '      Principal = { Federated = aws_iam_openid_connect_provider.token_bridge.arn }',
    `      Action    = ${hclString(WEB_IDENTITY_ACTION)}`,
    '      Condition = {',
    ...condition,
    '      }',
    '    }]',
    '  })',
    '}',
    '',
    'output "token_bridge_role_arn" {',
    '  value = aws_iam_role.token_bridge.arn',
    '}',
    '',
  ].join('\n');
}

/** CloudFormation (YAML, long-form intrinsics): the provider, the role, and the role ARN output. */
export function renderCloudFormation(plan: SetupPlan): string {
  const template = {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: `token-bridge: IAM OIDC provider and role for ${plan.issuer}`,
    Resources: {
      TokenBridgeOidcProvider: {
        Type: 'AWS::IAM::OIDCProvider',
        Properties: { Url: plan.issuer, ClientIdList: [plan.audience], ThumbprintList: plan.thumbprints },
      },
      TokenBridgeRole: {
        Type: 'AWS::IAM::Role',
        Properties: {
          RoleName: plan.roleName,
          // Ref of an AWS::IAM::OIDCProvider is its ARN.
          AssumeRolePolicyDocument: trustPolicy(plan, { Ref: 'TokenBridgeOidcProvider' }),
        },
      },
    },
    Outputs: {
      TokenBridgeRoleArn: { Value: { 'Fn::GetAtt': ['TokenBridgeRole', 'Arn'] } },
      TokenBridgeProviderArn: { Value: { Ref: 'TokenBridgeOidcProvider' } },
    },
  };
  return header(plan, '#') + '\n' + stringifyYaml(template, { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' });
}

export function renderSetup(plan: SetupPlan, format: SetupFormat): string {
  switch (format) {
    case 'json':
      return renderJson(plan);
    case 'cli':
      return renderCli(plan);
    case 'terraform':
      return renderTerraform(plan);
    case 'cloudformation':
      return renderCloudFormation(plan);
  }
}
